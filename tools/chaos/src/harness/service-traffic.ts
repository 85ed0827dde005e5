import { request } from 'undici';
import { sleep } from './app-process';
import { HOOK_BOT, type ChaosCluster } from './chaos-cluster';
import { errorMessage } from '@relaygram/contracts';

interface Call {
  what: string;
  expect: number;
  send: () => Promise<{ status: number; text: string }>;
}

/**
 * What the services behind the bot do meanwhile: send messages through the gateway (REST
 * and drop-in), get refused with a wrong token, a real bot token and a reserved method,
 * and an operator reading the admin API with and without the token. It keeps the gateway
 * and the admin API busy while processes die, and every answer is kept for the final
 * secret grep. Unexpected answers are counted for the report, not judged: the audit is
 * about updates.
 */
export class ServiceTraffic {
  readonly statuses = new Map<string, number>();
  unexpected = 0;
  private running = false;
  private loop: Promise<void> | undefined;

  constructor(private readonly cluster: ChaosCluster) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  private calls(): Call[] {
    const c = this.cluster;
    const gw = c.gateway.url;
    const post = (path: string, body: unknown, headers: Record<string, string>) => async () => {
      const res = await request(`${gw}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
        headersTimeout: 15_000,
        bodyTimeout: 15_000,
      });
      return {
        status: res.statusCode,
        text: `${JSON.stringify(res.headers)} ${await res.body.text()}`,
      };
    };
    const get =
      (url: string, headers: Record<string, string> = {}) =>
      async () => {
        const res = await request(url, { headers, headersTimeout: 15_000, bodyTimeout: 15_000 });
        return {
          status: res.statusCode,
          text: `${JSON.stringify(res.headers)} ${await res.body.text()}`,
        };
      };
    const chat = 10_000 + Math.floor(Math.random() * 100);
    const dropIn = `${c.pollBot.id}:${c.clientToken}`;
    return [
      {
        what: 'REST messages/send',
        expect: 200,
        send: post(
          `/api/v1/${HOOK_BOT}/messages/send`,
          { chat_id: chat, text: 'from a service' },
          {
            'x-service-token': c.clientToken,
          },
        ),
      },
      { what: 'drop-in getMe', expect: 200, send: get(`${gw}/bot${dropIn}/getMe`) },
      {
        what: 'REST with a wrong token',
        expect: 401,
        send: post(
          `/api/v1/${HOOK_BOT}/messages/send`,
          { chat_id: chat, text: 'x' },
          {
            'x-service-token': `${c.clientToken}x`,
          },
        ),
      },
      {
        what: 'drop-in with the real bot token',
        expect: 401,
        send: get(`${gw}/bot${c.pollBot.token}/getMe`),
      },
      {
        what: 'drop-in reserved method',
        expect: 403,
        send: get(`${gw}/bot${dropIn}/deleteWebhook?drop_pending_updates=true`),
      },
      {
        what: 'admin API without a token',
        expect: 401,
        send: get(`${c.ingress[1]?.adminUrl}/admin/api/routes`),
      },
      {
        what: 'admin API with a wrong token',
        expect: 401,
        send: get(`${c.dispatchers[0]?.adminUrl}/admin/api/routes`, {
          authorization: `Bearer ${c.adminToken.slice(1)}`,
        }),
      },
    ];
  }

  private async run(): Promise<void> {
    while (this.running) {
      for (const call of this.calls()) {
        let status: number;
        let text: string;
        try {
          ({ status, text } = await call.send());
        } catch (error) {
          // A process being killed right now: a connection error is what a service sees.
          status = 0;
          text = errorMessage(error);
        }
        this.cluster.record(`${call.what} -> ${status} ${text}`);
        const key = `${call.what} ${status}`;
        this.statuses.set(key, (this.statuses.get(key) ?? 0) + 1);
        if (status !== call.expect) this.unexpected++;
      }
      await sleep(300);
    }
  }
}
