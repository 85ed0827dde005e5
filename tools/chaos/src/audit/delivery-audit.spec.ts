import { loadConfigOrThrow, type RelaygramConfig } from '@relaygram/config';
import type { Update } from '@relaygram/routing';
import { generateToken, writeTestConfig, type TestConfigFile } from '@relaygram/testing';
import type { Arrival } from '../harness/audited-receiver';
import { auditDeliveries, type AcceptedUpdate, type DeadLetterSeen } from './delivery-audit';

/** The audit is what makes the chaos run fail: each kind of finding must be caught. */
describe('auditDeliveries', () => {
  let file: TestConfigFile;
  let config: RelaygramConfig;

  beforeAll(() => {
    file = writeTestConfig(`
bots:
  - { id: bot-a, token_env: BOT_A_TOKEN, mode: polling }
routes:
  - { name: chat, target_url: http://127.0.0.1:9/chat, ordering: chat }
  - { name: strict, target_url: http://127.0.0.1:9/strict, ordering: strict }
  - { name: none, target_url: http://127.0.0.1:9/none, ordering: none }
  - name: buy
    target_url: http://127.0.0.1:9/buy
    match: { commands: [/buy] }
`);
    config = loadConfigOrThrow({ path: file.path, env: { BOT_A_TOKEN: generateToken() } });
  });
  afterAll(() => file.remove());

  const message = (id: number, chat: number, text = `m${id}`): AcceptedUpdate => ({
    bot: 'bot-a',
    update: {
      update_id: id,
      message: {
        message_id: id,
        date: 1,
        chat: { id: chat, type: 'private' },
        text,
        ...(text.startsWith('/')
          ? { entities: [{ type: 'bot_command', offset: 0, length: text.split(' ')[0]?.length }] }
          : {}),
      },
    } as Update,
  });
  let seq = 0;
  const arrival = (
    route: string,
    updateId: number,
    status = 204,
    deliveryId?: string,
  ): Arrival => ({
    seq: ++seq,
    route,
    bot: 'bot-a',
    updateId,
    deliveryId: deliveryId ?? `${route}-${updateId}`,
    attempt: 1,
    status,
    at: Date.now(),
  });
  const everyRoute = (ids: number[]) =>
    ids.flatMap((id) => ['chat', 'strict', 'none'].map((r) => arrival(r, id)));

  it('passes a clean run: three routes match each plain message, /buy a fourth', () => {
    const accepted = [message(1, 10), message(2, 10), message(3, 11, '/buy x')];
    const result = auditDeliveries({
      config,
      accepted,
      arrivals: [...everyRoute([1, 2, 3]), arrival('buy', 3)],
      deadLetters: [],
    });
    expect(result).toMatchObject({
      accepted: 3,
      expected: 10,
      delivered: 10,
      duplicates: 0,
      lost: 0,
      orderViolations: 0,
      deadAsked: 0,
      deadUnexpected: 0,
      stray: 0,
      doubleAccepted: 0,
    });
  });

  it('counts a delivery never answered 2xx as lost, and extra 2xx answers as duplicates', () => {
    const result = auditDeliveries({
      config,
      accepted: [message(1, 10), message(2, 10)],
      arrivals: [
        ...everyRoute([1]),
        arrival('chat', 1),
        arrival('chat', 2, 503),
        arrival('strict', 2),
        arrival('none', 2),
      ],
      deadLetters: [],
    });
    expect(result.lost).toBe(1);
    expect(result.duplicates).toBe(1);
    expect(result.findings).toContain('lost: chat|bot-a|2 (arrived, never answered 2xx)');
  });

  it('finds a delivery that first arrived before an earlier one of its lane', () => {
    const result = auditDeliveries({
      config,
      accepted: [message(1, 10), message(2, 10), message(3, 11)],
      // Chat 11 is another lane of `chat`, but the same lane of `strict`.
      arrivals: [
        arrival('chat', 2),
        arrival('chat', 1),
        arrival('chat', 3),
        arrival('strict', 1),
        arrival('strict', 3),
        arrival('strict', 2),
        ...['none'].flatMap((r) => [arrival(r, 3), arrival(r, 2), arrival(r, 1)]),
      ],
      deadLetters: [],
    });
    expect(result.orderViolations).toBe(2);
    expect(result.lost).toBe(0);
  });

  it('lets a dead delivery be overtaken, and tells asked-for dead letters from others', () => {
    const dead = (route: string, updateId: number, reason: string): DeadLetterSeen => ({
      deliveryId: `${route}-${updateId}`,
      route,
      bot: 'bot-a',
      updateId,
      reason,
    });
    const result = auditDeliveries({
      config,
      accepted: [message(1, 10, '#reject'), message(2, 10), message(3, 10)],
      arrivals: [
        arrival('chat', 1, 422),
        arrival('chat', 2),
        ...everyRoute([3]),
        arrival('strict', 1),
        arrival('none', 1),
        arrival('strict', 2),
        arrival('none', 2),
      ],
      deadLetters: [dead('chat', 1, 'rejected'), dead('strict', 3, 'poison')],
      expectDead: (route, _bot, update) =>
        route === 'chat' && (update.message as { text: string }).text === '#reject'
          ? 'rejected'
          : undefined,
    });
    expect(result.deadAsked).toBe(1);
    expect(result.deadUnexpected).toBe(1);
    expect(result.orderViolations).toBe(0);
    expect(result.lost).toBe(0);
  });

  it('reports an update that reached a route it does not match, and one accepted twice', () => {
    const result = auditDeliveries({
      config,
      accepted: [message(1, 10)],
      arrivals: [
        ...everyRoute([1]),
        arrival('buy', 1),
        arrival('chat', 1, 204, 'another-delivery-id'),
        // An update of an earlier run is none of this audit's business.
        arrival('chat', 99),
      ],
      deadLetters: [],
    });
    expect(result.stray).toBe(1);
    expect(result.doubleAccepted).toBe(1);
    expect(result.duplicates).toBe(1);
  });

  describe('around a config reload', () => {
    // Updates 1-2 were accepted before `chat` was removed, 3 while the replicas
    // reloaded, 4 while no replica had the route, 5 while it was being added back.
    const owed = (route: string, _bot: string, update: Update) => {
      if (route !== 'chat') return 'required';
      return (['required', 'required', 'optional', 'none', 'optional'] as const)[
        update.update_id - 1
      ];
    };
    const accepted = [1, 2, 3, 4, 5].map((id) => message(id, 10));
    const otherRoutes = everyRoute([1, 2, 3, 4, 5]).filter((a) => a.route !== 'chat');

    it('does not count an optional delivery that never came as lost', () => {
      const result = auditDeliveries({
        config,
        accepted,
        arrivals: [...otherRoutes, arrival('chat', 1), arrival('chat', 2), arrival('chat', 5)],
        deadLetters: [],
        expectation: owed,
      });
      expect(result).toMatchObject({
        expected: 12,
        delivered: 12,
        optional: 2,
        optionalDelivered: 1,
        lost: 0,
        stray: 0,
        orderViolations: 0,
      });
    });

    it('still loses a required delivery, and holds optional ones to lane order', () => {
      const result = auditDeliveries({
        config,
        accepted,
        arrivals: [...otherRoutes, arrival('chat', 1), arrival('chat', 3), arrival('chat', 2)],
        deadLetters: [],
        expectation: owed,
      });
      expect(result.lost).toBe(0);
      expect(result.orderViolations).toBe(1);
      const missing = auditDeliveries({
        config,
        accepted,
        arrivals: [...otherRoutes, arrival('chat', 2)],
        deadLetters: [],
        expectation: owed,
      });
      expect(missing.lost).toBe(1);
      expect(missing.findings).toContain('lost: chat|bot-a|1 (never arrived)');
    });

    it('counts a delivery of an update accepted while no config had the route as stray', () => {
      const result = auditDeliveries({
        config,
        accepted,
        arrivals: [...otherRoutes, arrival('chat', 1), arrival('chat', 2), arrival('chat', 4)],
        deadLetters: [],
        expectation: owed,
      });
      expect(result.stray).toBe(1);
      expect(result.findings).toContain('stray: chat|bot-a|4 reached a route it does not match');
    });
  });
});
