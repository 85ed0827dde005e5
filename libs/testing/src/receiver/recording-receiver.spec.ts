import { Agent, request } from 'undici';
import { RecordingReceiver } from './recording-receiver';

describe('RecordingReceiver', () => {
  let rx: RecordingReceiver;

  beforeAll(async () => {
    rx = await RecordingReceiver.start();
  });
  afterAll(() => rx.stop());
  beforeEach(() => rx.reset());

  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await request(`${rx.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return {
      status: response.statusCode,
      headers: response.headers,
      text: await response.body.text(),
    };
  };

  it('records every request and answers 204 by default', async () => {
    const before = Date.now();
    const answer = await post(
      '/hooks/a?x=1',
      { update_id: 1 },
      { 'X-Telegram-Bot-Api-Secret-Token': 's3' },
    );
    expect(answer.status).toBe(204);
    await request(`${rx.url}/other`, { method: 'PUT', body: 'plain text' }).then((r) =>
      r.body.dump(),
    );

    expect(rx.count).toBe(2);
    const [first, second] = rx.deliveries;
    expect(first).toEqual(
      expect.objectContaining({
        method: 'POST',
        path: '/hooks/a?x=1',
        status: 204,
        json: { update_id: 1 },
      }),
    );
    expect(first?.headers['x-telegram-bot-api-secret-token']).toBe('s3');
    expect(first?.body.toString()).toBe('{"update_id":1}');
    expect(first?.receivedAt).toBeGreaterThanOrEqual(before);
    expect(second?.method).toBe('PUT');
    expect(second?.json).toBeUndefined();
    expect(second?.body.toString()).toBe('plain text');
  });

  it('answers with a scripted status, body and headers', async () => {
    rx.respondWith({ status: 200, body: { ok: true }, headers: { 'X-Extra': 'yes' } });
    const json = await post('/', {});
    expect(json).toEqual(expect.objectContaining({ status: 200, text: '{"ok":true}' }));
    expect(json.headers['content-type']).toBe('application/json');
    expect(json.headers['x-extra']).toBe('yes');

    rx.respondWith({ status: 400, body: 'nope', headers: { 'content-type': 'text/plain' } });
    const text = await post('/', {});
    expect([text.status, text.text, text.headers['content-type']]).toEqual([
      400,
      'nope',
      'text/plain',
    ]);
    expect(rx.deliveries.map((d) => d.status)).toEqual([200, 400]);
  });

  it('computes the answer from the delivery', async () => {
    rx.respondWith((delivery) => ({
      status: (delivery.json as { fail?: boolean }).fail ? 503 : 202,
    }));
    expect((await post('/', { fail: true })).status).toBe(503);
    expect((await post('/', { fail: false })).status).toBe(202);
  });

  it('answers 500 when a computed answer throws', async () => {
    rx.respondWith(() => {
      throw new Error('bug in the test');
    });
    const answer = await post('/', {});
    expect([answer.status, answer.text]).toEqual([500, 'responder failed: Error: bug in the test']);
  });

  it('uses queued answers in order before the default one', async () => {
    rx.respondNext([{ status: 500 }, { status: 429, headers: { 'retry-after': '3' } }]);
    rx.respondNext([{ status: 201 }]);
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await post('/', { i })).status);
    expect(statuses).toEqual([500, 429, 201, 204]);
  });

  it('answers a redirect without following anything itself', async () => {
    rx.respondWith({ status: 301, headers: { location: `${rx.url}/new` } });
    const answer = await post('/old', {});
    expect(answer.status).toBe(301);
    expect(answer.headers['location']).toBe(`${rx.url}/new`);
    expect(rx.deliveries.map((d) => d.path)).toEqual(['/old']);
  });

  it('answers slowly when asked to', async () => {
    rx.respondNext([{ status: 200, delayMs: 200 }]);
    const started = Date.now();
    expect((await post('/', {})).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });

  it('drops the connection without an answer', async () => {
    rx.respondNext([{ drop: true }]);
    await expect(post('/', { update_id: 9 })).rejects.toThrow();
    expect(rx.deliveries).toEqual([expect.objectContaining({ status: 0, json: { update_id: 9 } })]);
    expect((await post('/', {})).status).toBe(204);
  });

  it('waits for a number of requests or for a matching one', async () => {
    const three = rx.waitFor(3, { timeoutMs: 2_000 });
    const match = rx.waitFor((d) => (d.json as { n: number }).n === 2, { timeoutMs: 2_000 });
    for (let n = 1; n <= 3; n++) await post('/', { n });
    expect((await three).map((d) => d.json)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect((await match).json).toEqual({ n: 2 });
    await expect(rx.waitFor(4, { timeoutMs: 30 })).rejects.toThrow('3 of 4 requests received');
  });

  it('forgets with clear() and goes back to 204 with reset()', async () => {
    rx.respondWith({ status: 500 });
    await post('/', {});
    rx.clear();
    expect([rx.count, rx.deliveries.length]).toEqual([0, 0]);
    expect((await post('/', {})).status).toBe(500);
    rx.reset();
    expect((await post('/', {})).status).toBe(204);
  });

  it('only counts when record is false, over kept-alive connections', async () => {
    const counter = await RecordingReceiver.start({ record: false });
    const agent = new Agent({ connections: 4 });
    try {
      await Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          request(`${counter.url}/bench`, {
            method: 'POST',
            body: `{"i":${i}}`,
            dispatcher: agent,
          }).then((r) => r.body.dump()),
        ),
      );
      expect(counter.count).toBe(200);
      expect(counter.deliveries).toEqual([]);
      expect(() => counter.waitFor(() => true)).toThrow();
      expect(() => counter.respondWith(() => ({ status: 200 }))).toThrow();
    } finally {
      await agent.close();
      await counter.stop();
    }
  });

  it('stops with requests still waiting for their answer', async () => {
    const slow = await RecordingReceiver.start();
    slow.respondWith({ status: 200, delayMs: 60_000 });
    const pending = request(`${slow.url}/`, { method: 'POST', body: '{}' }).catch(
      (e: unknown) => e,
    );
    await slow.waitFor(1);
    await slow.stop();
    expect(await pending).toBeInstanceOf(Error);
  });
});
