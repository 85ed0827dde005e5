import { expectDocumentedAnswer } from '@relaygram/testing';
import { request } from 'undici';

export interface JsonAnswer<T = Record<string, unknown>> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
  text: string;
}

/** POSTs JSON (or a raw body with its content type) and reads the answer as JSON. */
export async function post<T = Record<string, unknown>>(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<JsonAnswer<T>> {
  const raw = typeof body === 'string' || Buffer.isBuffer(body);
  const res = await request(url, {
    method: 'POST',
    headers: raw ? headers : { 'content-type': 'application/json', ...headers },
    body: raw ? body : JSON.stringify(body),
  });
  return answer<T>('POST', url, res);
}

export async function get<T = Record<string, unknown>>(
  url: string,
  headers: Record<string, string> = {},
): Promise<JsonAnswer<T>> {
  return answer<T>('GET', url, await request(url, { headers }));
}

/** Reads the answer; a REST or admin answer must match the app's OpenAPI document. */
async function answer<T>(
  method: string,
  url: string,
  res: Awaited<ReturnType<typeof request>>,
): Promise<JsonAnswer<T>> {
  const text = await res.body.text();
  let body: unknown;
  let json = true;
  try {
    body = JSON.parse(text);
  } catch {
    body = { unparsed: text };
    json = false;
  }
  const type = res.headers['content-type'];
  await expectDocumentedAnswer({
    method,
    url,
    status: res.statusCode,
    contentType: json ? (typeof type === 'string' ? type : undefined) : 'text/plain',
    body,
  });
  return { status: res.statusCode, headers: res.headers, body: body as T, text };
}
