import { RecordingReceiver, TelegramEmulator, type Delivery, eventually } from '@relaygram/testing';
import { DispatcherHarness, messageUpdate, sleep } from './support/dispatcher-harness';

const RESERVED = ['getUpdates', 'setWebhook', 'deleteWebhook', 'logOut', 'close'];

/**
 * SSRF and what a target can make the dispatcher do: a redirect is an answer to retry,
 * never a place to go; no field of an update changes where it is delivered; a webhook
 * reply can call Telegram only with an allowed method, for the route's own bot; every
 * header sent is a plain single-line value.
 */
describe('dispatcher security', () => {
  let h: DispatcherHarness;
  let emulator: TelegramEmulator;
  let target: RecordingReceiver;
  let elsewhere: RecordingReceiver;
  let token: string;
  let nextId = 7_000;

  const of = (route: string, updateId: number) => (d: Delivery) =>
    d.path === `/${route}` && d.headers['x-telegram-update-id'] === String(updateId);

  beforeAll(async () => {
    h = await DispatcherHarness.create('security');
    token = h.bots['bot-a'] as string;
    emulator = await TelegramEmulator.start();
    emulator.addBot({ token, username: 'security_test_bot' });
    target = await RecordingReceiver.start();
    elsewhere = await RecordingReceiver.start();
    h.writeConfig(
      `
routes:
  - name: redirected
    target_url: ${target.url}/redirected
    match: { chat_ids: [1] }
    retry: { backoff_cap: 1s }
  - name: replies
    target_url: ${target.url}/replies
    match: { chat_ids: [2] }
  - name: plain
    target_url: ${target.url}/plain
    format: envelope
    match: { chat_ids: [3] }
`,
      { apiBase: emulator.apiRoot },
    );
    await h.start({ reconcileEveryMs: 500 });
  });

  afterAll(async () => {
    await h.cleanup();
    await target.stop();
    await elsewhere.stop();
    await emulator.stop();
  });

  it.each([301, 302, 303, 307, 308])(
    'does not follow a %i: it retries the target',
    async (status) => {
      const updateId = nextId++;
      let answered = 0;
      target.respondWith((d) =>
        of('redirected', updateId)(d) && answered++ === 0
          ? { status, headers: { location: `${elsewhere.url}/stolen?u=${updateId}` } }
          : { status: 204 },
      );
      await h.enqueue(messageUpdate(updateId, 1));
      await eventually(() => target.deliveries.filter(of('redirected', updateId)).length >= 2, {
        timeoutMs: 15_000,
        what: `the retry after a ${status}`,
      });
      const attempts = target.deliveries.filter(of('redirected', updateId));
      expect(attempts.map((d) => d.headers['x-webhook-attempt'])).toEqual(['1', '2']);
      expect(elsewhere.count).toBe(0);
    },
  );

  it('delivers to the configured target whatever the update carries', async () => {
    target.respondWith({ status: 204 });
    const updateId = nextId++;
    const update = messageUpdate(updateId, 3);
    Object.assign(update, {
      target_url: `${elsewhere.url}/a`,
      url: `${elsewhere.url}/b`,
      headers: { host: new URL(elsewhere.url).host },
    });
    Object.assign(update.message as object, {
      text: `${elsewhere.url}/c`,
      reply_markup: { inline_keyboard: [[{ text: 'x', url: `${elsewhere.url}/d` }]] },
    });
    await h.enqueue(update);
    const delivery = await target.waitFor(of('plain', updateId), { timeoutMs: 10_000 });
    expect(delivery.headers.host).toBe(new URL(target.url).host);
    expect(elsewhere.count).toBe(0);
  });

  it('sends only single-line, visible-ASCII header values', async () => {
    for (const d of target.deliveries) {
      for (const [name, value] of Object.entries(d.headers)) {
        expect({ name, value }).toEqual({ name, value: expect.stringMatching(/^[\x20-\x7e]*$/) });
      }
      expect(d.headers['x-webhook-route']).toMatch(/^[a-z0-9-]+$/);
      expect(d.headers['x-relaygram-bot']).toBe('bot-a');
    }
    expect(target.deliveries.length).toBeGreaterThan(0);
  });

  it('never calls a reserved method from a webhook reply, in any case', async () => {
    const methods = RESERVED.flatMap((m) => [m, m.toLowerCase(), m.toUpperCase()]);
    const replyFor = new Map<string, string>();
    target.respondWith((d) => {
      const method = replyFor.get(d.headers['x-telegram-update-id'] ?? '');
      return method === undefined
        ? { status: 204 }
        : {
            status: 200,
            body: {
              method,
              chat_id: 2,
              text: 'from a reply',
              url: `${elsewhere.url}/hook`,
              drop_pending_updates: true,
            },
          };
    });
    const ids: number[] = [];
    for (const method of [...methods, 'sendMessage']) {
      const updateId = nextId++;
      replyFor.set(String(updateId), method);
      ids.push(updateId);
      await h.enqueue(messageUpdate(updateId, 2));
    }
    const last = ids[ids.length - 1] as number;
    await target.waitFor(of('replies', last), { timeoutMs: 15_000 });
    // The allowed reply (sendMessage, last in the lane) is made; none of the others.
    await emulator.waitForCalls(token, { method: 'sendMessage', timeoutMs: 10_000 });
    await sleep(300);
    const made = emulator.calls(token).map((c) => c.method.toLowerCase());
    for (const method of RESERVED) expect(made).not.toContain(method.toLowerCase());
    expect(made).toContain('sendmessage');
    expect(emulator.webhookInfo(token).url).toBe('');
    expect(elsewhere.count).toBe(0);
  });
});
