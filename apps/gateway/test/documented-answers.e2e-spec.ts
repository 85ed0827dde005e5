import { randomBytes } from 'node:crypto';
import {
  answerProblem,
  expectDocumentedAnswer,
  TelegramEmulator,
  type ApiAnswer,
} from '@relaygram/testing';
import { request } from 'undici';
import { bootGateway, type GatewayApp } from './support/gateway-app';

const ADMIN_TOKEN = 'admin-token-for-the-drift-test-0123456789';

/** A real answer of the app, kept as the fixture the drifted copies start from. */
async function recorded(
  method: 'GET' | 'POST',
  url: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<ApiAnswer> {
  const res = await request(url, {
    method,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const type = res.headers['content-type'];
  return {
    method,
    url,
    status: res.statusCode,
    contentType: typeof type === 'string' ? type : undefined,
    body: await res.body.json(),
  };
}

/**
 * The e2e helpers hold every REST and admin answer to the app's OpenAPI document
 * (expectDocumentedAnswer): real answers pass, and the same answers with their shape
 * or status changed, as a drifted handler would send them, are refused.
 */
describe('answers held to the OpenAPI document', () => {
  let emulator: TelegramEmulator;
  let app: GatewayApp;
  let sent: ApiAnswer;
  let unauthorized: ApiAnswer;
  let raw: ApiAnswer;
  let adminBot: ApiAnswer;

  beforeAll(async () => {
    emulator = await TelegramEmulator.start();
    const bot = emulator.addBot();
    const token = randomBytes(24).toString('base64url');
    app = await bootGateway(
      'gw-drift',
      {
        bots: [{ id: 'main-bot', token_env: 'DRIFT_BOT_TOKEN', mode: 'polling' }],
        routes: [],
        clients: [{ name: 'site', token_env: 'DRIFT_CLIENT_TOKEN', bots: ['main-bot'] }],
      },
      {
        TELEGRAM_API_BASE: emulator.apiRoot,
        DRIFT_BOT_TOKEN: bot.token,
        DRIFT_CLIENT_TOKEN: token,
        ADMIN_TOKEN,
      },
    );
    const { url, adminUrl } = app.running;
    const client = { 'x-service-token': token };
    sent = await recorded('POST', `${url}/api/v1/main-bot/messages/send`, client, {
      chat_id: 7,
      text: 'hello',
    });
    unauthorized = await recorded(
      'POST',
      `${url}/api/v1/main-bot/messages/send`,
      {},
      {
        chat_id: 7,
        text: 'hello',
      },
    );
    raw = await recorded('POST', `${url}/api/v1/main-bot/raw/getMe`, client, {});
    adminBot = await recorded('GET', `${adminUrl}/admin/api/bots/main-bot`, {
      authorization: `Bearer ${ADMIN_TOKEN}`,
    });
  });
  afterAll(async () => {
    await app?.close();
    await emulator?.stop();
  });

  it('lets the real answers through', async () => {
    expect([sent.status, unauthorized.status, raw.status, adminBot.status]).toEqual([
      200, 401, 200, 200,
    ]);
    for (const answer of [sent, unauthorized, raw, adminBot]) {
      expect(await answerProblem(answer)).toBeUndefined();
      await expectDocumentedAnswer(answer);
    }
  });

  it('refuses an error body whose field was renamed', async () => {
    const drifted = { ...unauthorized, body: { message: 'unauthorized' } };
    expect(await answerProblem(drifted)).toMatch(/must have required property 'error'/);
    await expect(expectDocumentedAnswer(drifted)).rejects.toThrow(
      /POST \/api\/v1\/main-bot\/messages\/send answered 401/,
    );
  });

  it('refuses a field of the wrong type', async () => {
    const drifted = { ...raw, body: { ...(raw.body as object), ok: 'true' } };
    expect(await answerProblem(drifted)).toMatch(
      /body\/ok must be equal to one of the allowed values/,
    );
  });

  it('refuses a status the operation does not document', async () => {
    expect(await answerProblem({ ...sent, status: 418 })).toBe('status 418 is not documented');
  });

  it('refuses an admin answer that lost a field', async () => {
    const { outbound: _dropped, ...rest } = adminBot.body as Record<string, unknown>;
    expect(await answerProblem({ ...adminBot, body: rest })).toMatch(
      /must have required property 'outbound'/,
    );
  });
});
