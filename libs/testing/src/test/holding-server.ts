import http, { type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '../eventually';

export interface HeldRequest {
  body: { update_id: number; [type: string]: unknown };
  answered: boolean;
  answer(status?: number): void;
}

/**
 * A webhook target that answers nothing until the test says so: it shows exactly which
 * requests are in flight at once, without relying on timing.
 */
export class HoldingServer {
  readonly arrivals: HeldRequest[] = [];

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<HoldingServer> {
    const server = http.createServer();
    const holder = new HoldingServer(server);
    server.on('request', (request, response: ServerResponse) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const held: HeldRequest = {
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as HeldRequest['body'],
          answered: false,
          answer(status = 200) {
            held.answered = true;
            response.writeHead(status).end();
          },
        };
        holder.arrivals.push(held);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return holder;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  inFlight(): HeldRequest[] {
    return this.arrivals.filter((held) => !held.answered);
  }

  /** The ids in flight, once exactly `count` requests are. */
  async waitForInFlight(count: number): Promise<number[]> {
    await eventually(() => this.inFlight().length === count);
    return this.inFlight().map((held) => held.body.update_id);
  }

  answer(updateId: number, status = 200): void {
    const held = this.inFlight().find((h) => h.body.update_id === updateId);
    if (!held) throw new Error(`update ${updateId} is not in flight`);
    held.answer(status);
  }

  async stop(): Promise<void> {
    for (const held of this.inFlight()) held.answer(503);
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }
}
