import { createHash } from 'node:crypto';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the fake Telegram saw it (the body is left for the handler to read). */
export interface SeenRequest {
  httpMethod: string;
  /** Path and query exactly as received. */
  url: string;
  pathname: string;
  query: string;
  headers: IncomingHttpHeaders;
}

export type FakeHandler = (
  seen: SeenRequest,
  req: IncomingMessage,
  res: ServerResponse,
) => void | Promise<void>;

export interface FakeTelegram {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  port: number;
  requests: SeenRequest[];
  handle(handler: FakeHandler): void;
  close(): Promise<void>;
}

/** A node:http server on a loopback port that plays the Bot API as each test says. */
export async function startFakeTelegram(handler?: FakeHandler): Promise<FakeTelegram> {
  let current: FakeHandler = handler ?? ((_seen, _req, res) => sendJson(res, 404, notFound()));
  const requests: SeenRequest[] = [];
  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const seen: SeenRequest = {
      httpMethod: req.method ?? 'GET',
      url,
      pathname: q < 0 ? url : url.slice(0, q),
      query: q < 0 ? '' : url.slice(q + 1),
      headers: req.headers,
    };
    requests.push(seen);
    Promise.resolve(current(seen, req, res)).catch((error: unknown) => {
      if (!res.headersSent)
        sendJson(res, 500, { ok: false, error_code: 500, description: String(error) });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    handle: (next) => {
      current = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const bytes = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': bytes.length });
  res.end(bytes);
}

export function notFound(): unknown {
  return { ok: false, error_code: 404, description: 'Not Found' };
}

export async function readBody(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** Size and sha256 of a body, read without keeping it. */
export async function digestBody(
  stream: AsyncIterable<Uint8Array>,
  onChunk?: (bytes: number) => void,
): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of stream) {
    hash.update(chunk);
    size += chunk.length;
    onChunk?.(size);
  }
  return { size, sha256: hash.digest('hex') };
}

/** The path segments after `/bot<token>/` (or `/file/bot<token>/`), for assertions. */
export function splitBotPath(pathname: string): { prefix: string; token: string; rest: string } {
  const match = /^(.*?)\/(?:file\/)?bot([^/]+)\/(.*)$/.exec(pathname);
  if (!match) return { prefix: '', token: '', rest: '' };
  return { prefix: match[1], token: match[2], rest: match[3] };
}
