import { readFile, writeFile } from 'node:fs/promises';
import { ConfigService } from '@relaygram/config';
import { get, post } from './http-client';
import { clientToken, startGatewayHarness, type GatewayHarness } from './gateway-harness';

describe('config reload', () => {
  let h: GatewayHarness;
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    h = await startGatewayHarness();
  });
  afterAll(async () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await h.close();
  });

  it('switches clients and bots atomically, with no restart', async () => {
    const send = (bot: string, token: string) =>
      post(
        `${h.url}/api/v1/${bot}/messages/send`,
        { chat_id: 1, text: 'x' },
        { 'x-service-token': token },
      );
    expect((await send('other-bot', h.siteToken)).status).toBe(200);
    expect((await send('main-bot', h.narrowToken)).status).toBe(200);

    const newcomer = clientToken();
    // A reload reads the env of the process, as SIGHUP does.
    for (const [name, value] of Object.entries({ ...h.env, GW_NEW_TOKEN: newcomer })) {
      if (!name.startsWith('GW_')) continue;
      saved[name] = process.env[name];
      process.env[name] = value;
    }
    const otherBot = h.yaml.slice(
      h.yaml.indexOf('  - id: other-bot'),
      h.yaml.indexOf('  - id: lonely-bot'),
    );
    const clients = h.yaml.slice(h.yaml.indexOf('clients:'));
    await writeFile(
      h.configPath,
      h.yaml
        .replace(otherBot, '')
        .replace(
          clients,
          [
            'clients:',
            '  - name: site',
            '    token_env: GW_SITE_TOKEN',
            '    bots: [main-bot]',
            '  - name: newcomer',
            '    token_env: GW_NEW_TOKEN',
            '    bots: [main-bot, lonely-bot]',
            '',
          ].join('\n'),
        ),
    );
    const outcome = await h.running.app.get(ConfigService).reload();
    expect(outcome).toMatchObject({ ok: true });

    expect((await send('main-bot', newcomer)).status).toBe(200);
    expect((await send('lonely-bot', newcomer)).status).toBe(200);
    expect((await send('main-bot', h.narrowToken)).status).toBe(401);
    expect((await send('other-bot', h.siteToken)).status).toBe(404);
    const dropIn = await get(`${h.url}/bot${h.dropInToken(h.other)}/getMe`);
    expect(dropIn.status).toBe(401);
    expect((await get(`${h.url}/bot${h.dropInToken(h.lonely, newcomer)}/getMe`)).status).toBe(200);
  });

  it("applies a bot's new outbound budgets to the next call", async () => {
    const send = () =>
      post(
        `${h.url}/api/v1/main-bot/messages/send`,
        { chat_id: 77, text: 'x' },
        { 'x-service-token': h.siteToken },
      );
    const current = await readFile(h.configPath, 'utf8');
    const tight = current.replace(
      /( {2}- id: main-bot\n(?: {4}.*\n)*)/,
      `$1    outbound:\n      per_chat_per_second: 1\n      chat_burst: 1\n      max_wait: 0s\n`,
    );
    expect(tight).not.toBe(current);
    await writeFile(h.configPath, tight);
    expect(await h.running.app.get(ConfigService).reload()).toMatchObject({ ok: true });
    // One at once, and no waiting at all for the next: refused, Telegram-style.
    expect((await send()).status).toBe(200);
    const refused = await send();
    expect(refused).toMatchObject({ status: 502, body: { error_code: 429 } });
  });
});
