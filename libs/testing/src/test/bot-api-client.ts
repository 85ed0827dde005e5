import { FormData, request } from 'undici';

/** What a Bot API call answers: Telegram's JSON plus the HTTP status. */
export interface ApiAnswer<T = unknown> {
  status: number;
  body: {
    ok: boolean;
    result?: T;
    error_code?: number;
    description?: string;
    parameters?: { retry_after?: number; migrate_to_chat_id?: number };
  };
}

export type Encoding = 'json' | 'query' | 'form' | 'multipart';

export interface FileField {
  filename: string;
  bytes: Buffer;
  contentType?: string;
}

export interface CallOptions {
  encoding?: Encoding;
  httpMethod?: 'GET' | 'POST';
  files?: Record<string, FileField>;
}

/**
 * Calls `${apiRoot}/bot<token>/<method>` over real HTTP the ways bot frameworks do: JSON,
 * query string, urlencoded or multipart (with files).
 */
export async function callApi<T = unknown>(
  apiRoot: string,
  token: string,
  method: string,
  params: Record<string, unknown> = {},
  options: CallOptions = {},
): Promise<ApiAnswer<T>> {
  const encoding = options.encoding ?? (options.files ? 'multipart' : 'json');
  let url = `${apiRoot}/bot${token}/${method}`;
  let body: string | FormData | undefined;
  const headers: Record<string, string> = {};
  if (encoding === 'json') {
    body = JSON.stringify(params);
    headers['content-type'] = 'application/json';
  } else if (encoding === 'query') {
    const query = new URLSearchParams(stringify(params)).toString();
    if (query) url += `?${query}`;
  } else if (encoding === 'form') {
    body = new URLSearchParams(stringify(params)).toString();
    headers['content-type'] = 'application/x-www-form-urlencoded';
  } else {
    const form = new FormData();
    for (const [name, value] of Object.entries(stringify(params))) form.append(name, value);
    for (const [name, file] of Object.entries(options.files ?? {})) {
      form.append(
        name,
        new Blob([file.bytes], { type: file.contentType ?? 'application/octet-stream' }),
        file.filename,
      );
    }
    body = form;
  }
  const httpMethod = options.httpMethod ?? (encoding === 'query' ? 'GET' : 'POST');
  const response = await request(url, { method: httpMethod, headers, body });
  const text = await response.body.text();
  return { status: response.statusCode, body: JSON.parse(text) as ApiAnswer<T>['body'] };
}

/** Parameters as text fields: objects JSON-serialized, the way Telegram expects them. */
function stringify(params: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    out[key] = typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
  }
  return out;
}

/** The `result` of a call that must succeed. */
export async function resultOf<T>(
  apiRoot: string,
  token: string,
  method: string,
  params: Record<string, unknown> = {},
  options: CallOptions = {},
): Promise<T> {
  const answer = await callApi<T>(apiRoot, token, method, params, options);
  if (!answer.body.ok) {
    throw new Error(`${method} failed: ${answer.status} ${answer.body.description ?? ''}`);
  }
  return answer.body.result as T;
}
