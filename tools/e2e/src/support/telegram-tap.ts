import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One getUpdates call as a tap saw it: who made it, for which bot, from when to when. */
export interface PollCall {
  tap: string;
  /** The numeric bot id (the digits before the colon of the token). */
  bot: number;
  start: number;
  end: number;
  status: number;
}

/**
 * A pass-through proxy in front of the Telegram emulator, one per process under test:
 * each process gets its own TELEGRAM_API_BASE, so every getUpdates call can be traced to
 * the process that made it.
 */
export class TelegramTap {
  readonly polls: PollCall[] = [];
  private readonly agent = new http.Agent({ keepAlive: true });

  private constructor(
    readonly name: string,
    private readonly server: http.Server,
    private readonly upstream: URL,
  ) {}

  static async start(name: string, upstreamRoot: string): Promise<TelegramTap> {
    const server = http.createServer();
    const tap = new TelegramTap(name, server, new URL(upstreamRoot));
    server.on('request', (req, res) => tap.forward(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return tap;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.agent.destroy();
  }

  private forward(req: IncomingMessage, res: ServerResponse): void {
    const start = Date.now();
    const poll = /^\/bot(\d+):[^/]+\/getupdates(?:\?|$)/i.exec(req.url ?? '');
    const upstream = http.request(
      {
        host: this.upstream.hostname,
        port: this.upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: this.upstream.host },
        agent: this.agent,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        answer.on('end', () => {
          if (poll) {
            this.polls.push({
              tap: this.name,
              bot: Number(poll[1]),
              start,
              end: Date.now(),
              status: answer.statusCode ?? 0,
            });
          }
        });
      },
    );
    upstream.on('error', () => res.destroy());
    req.on('aborted', () => upstream.destroy());
    req.pipe(upstream);
  }
}
