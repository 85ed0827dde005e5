import { loadConfigOrThrow, type RelaygramConfig } from '@relaygram/config';
import { laneId } from '@relaygram/contracts';
import {
  generateToken,
  writeTestConfig,
  type TestConfigFile,
  fuzzParameters,
} from '@relaygram/testing';
import fc from 'fast-check';
import { command } from './command-parser';
import { laneKeyFor } from './lane-key';
import { selectRoutes } from './route-selector';
import { actorId, callbackData, chatId, updateType } from './update-extractors';
import { UPDATE_TYPES, type Update } from './update.types';

/**
 * Routing reads updates nobody validated beyond `update_id`: every extractor, the
 * command parser, the lane key and the route selection must answer for any shape of
 * object without throwing, and answer only what their types promise.
 *
 * Replay a failure with the seed fast-check prints: FC_SEED=<seed> (and FC_PATH=<path>);
 * FC_NUM_RUNS raises or lowers the number of runs.
 */
/** A value of any JSON shape, or one of the awkward ones JSON can carry. */
const jsonish = fc.oneof(
  fc.anything({ maxDepth: 3, withNullPrototype: true, withObjectString: true }),
  fc.constantFrom(
    2 ** 53,
    -(2 ** 53),
    Number.MAX_VALUE,
    -0,
    1.5,
    '42',
    '',
    '/start',
    '__proto__',
    [],
    {},
  ),
);

const idLike = fc.oneof(
  fc.integer(),
  fc.maxSafeInteger(),
  fc.double(),
  fc.constantFrom(2 ** 53 + 2, '123', null, true, [1], { id: 1 }),
);

/** Objects shaped like the parts of a Message routing reads, with any value in any slot. */
const messageLike = fc.record(
  {
    message_id: idLike,
    from: fc.oneof(fc.record({ id: idLike, is_bot: fc.boolean() }, { requiredKeys: [] }), jsonish),
    chat: fc.oneof(fc.record({ id: idLike, type: fc.string() }, { requiredKeys: [] }), jsonish),
    user: fc.oneof(fc.record({ id: idLike }, { requiredKeys: [] }), jsonish),
    actor_chat: fc.oneof(fc.record({ id: idLike }, { requiredKeys: [] }), jsonish),
    voter_chat: fc.oneof(fc.record({ id: idLike }, { requiredKeys: [] }), jsonish),
    text: fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      fc.constantFrom('/buy', '/BUY@Fuzz_Bot now', '/buy@other_bot', '/', '/\u0000'),
      jsonish,
    ),
    caption: fc.oneof(fc.string(), jsonish),
    entities: fc.oneof(
      fc.array(
        fc.record(
          {
            type: fc.oneof(fc.constant('bot_command'), fc.string()),
            offset: fc.oneof(fc.integer({ min: -2, max: 40 }), jsonish),
            length: fc.oneof(fc.integer({ min: -2, max: 400 }), fc.double(), jsonish),
          },
          { requiredKeys: [] },
        ),
        { maxLength: 4 },
      ),
      jsonish,
    ),
    caption_entities: jsonish,
    data: fc.oneof(fc.string(), fc.constantFrom('buy:1', 'admin:x'), jsonish),
    message: jsonish,
    boost: jsonish,
    source: jsonish,
    user_chat_id: idLike,
  },
  { requiredKeys: [] },
);

const updateTypeName = fc.oneof(
  fc.constantFrom(...UPDATE_TYPES),
  fc.constantFrom('constructor', '__proto__', 'toString', 'hasOwnProperty', 'update_id', ''),
  fc.string(),
);

/** An Update-shaped object: an update_id of any kind and one or more type fields of any shape. */
const updateShaped: fc.Arbitrary<Update> = fc
  .tuple(
    fc.oneof(fc.nat(), jsonish),
    fc.array(fc.tuple(updateTypeName, fc.oneof(messageLike, jsonish)), { maxLength: 3 }),
    fc.boolean(),
  )
  .map(([updateId, fields, nested]) => {
    const update: Record<string, unknown> = { update_id: updateId };
    // defineProperty: `__proto__` and `constructor` become own keys, as JSON.parse makes them.
    const set = (key: string, value: unknown) =>
      Object.defineProperty(update, key, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    for (const [type, payload] of fields) set(type, payload);
    // A callback query carries a whole message one level down.
    if (nested && fields[0]) {
      const [type, payload] = fields[0];
      if (typeof payload === 'object' && payload !== null) {
        set(type, { ...payload, message: { chat: { id: 5 }, text: '/buy' } });
      }
    }
    return update as Update;
  });

const ROUTES_YAML = `
bots:
  - { id: fuzz-bot, token_env: FUZZ_BOT_TOKEN, mode: polling, username: Fuzz_Bot }
  - { id: other-bot, token_env: OTHER_BOT_TOKEN, mode: polling }
routes:
  - { name: everything, target_url: http://127.0.0.1:9/a, ordering: chat }
  - { name: strict-all, target_url: http://127.0.0.1:9/b, ordering: strict }
  - { name: unordered, target_url: http://127.0.0.1:9/c, ordering: none }
  - name: buyers
    target_url: http://127.0.0.1:9/d
    bots: [fuzz-bot]
    match: { commands: [/buy], user_ids: [1, 2, 3] }
  - name: callbacks
    target_url: http://127.0.0.1:9/e
    match: { update_types: [callback_query], callback_prefixes: ['buy:'] }
  - name: chat-five
    target_url: http://127.0.0.1:9/f
    match: { chat_ids: [5, -1001] }
  - name: messages
    target_url: http://127.0.0.1:9/g
    bots: [other-bot]
    match: { update_types: [message, edited_message] }
clients: []
`;

const LANE_ID = /^[a-z0-9-]+\.[a-z0-9-]+\.(c-?\d+|u-?\d+|all|d.+)$/;

describe('routing: arbitrary Update-shaped objects (fuzz)', () => {
  let file: TestConfigFile;
  let config: RelaygramConfig;

  beforeAll(() => {
    file = writeTestConfig(ROUTES_YAML);
    config = loadConfigOrThrow({
      path: file.path,
      env: {
        FUZZ_BOT_TOKEN: generateToken(),
        OTHER_BOT_TOKEN: generateToken(),
      },
    });
  });
  afterAll(() => file.remove());

  it('extractors never throw and return only ids, strings or nothing', () => {
    fc.assert(
      fc.property(updateShaped, fc.option(fc.string(), { nil: undefined }), (update, username) => {
        const type = updateType(update);
        expect(type === undefined || typeof update[type] === 'object').toBe(true);
        for (const id of [actorId(update), chatId(update)]) {
          expect(id === undefined || Number.isSafeInteger(id)).toBe(true);
        }
        const data = callbackData(update);
        expect(data === undefined || typeof data === 'string').toBe(true);
        const cmd = command(update, username);
        if (cmd !== undefined) {
          expect(cmd).toMatch(/^\//);
          expect(cmd).toBe(cmd.toLowerCase());
          expect(cmd).not.toContain('@');
        }
      }),
      fuzzParameters(3000),
    );
  });

  it('lane ids are always well formed: no ":", whitespace or control characters', () => {
    fc.assert(
      fc.property(updateShaped, fc.uuid(), (update, deliveryId) => {
        for (const ordering of ['chat', 'strict', 'none'] as const) {
          const key = laneKeyFor(ordering, update, deliveryId);
          const id = laneId('a-route', 'a-bot', key);
          expect(id).toMatch(LANE_ID);
          // eslint-disable-next-line no-control-regex -- control characters are what is looked for
          expect(id).not.toMatch(/[:\s\u0000-\u001f]/);
        }
      }),
      fuzzParameters(3000),
    );
  });

  it('selectRoutes picks, in config order, only routes of the bot whose rules hold', () => {
    fc.assert(
      fc.property(
        updateShaped,
        fc.constantFrom('fuzz-bot', 'other-bot', 'no-such-bot'),
        (update, bot) => {
          const selected = selectRoutes(config, bot, update).map((r) => r.name);
          expect(selectRoutes(config, bot, update).map((r) => r.name)).toEqual(selected);
          const ofBot = config.routes.filter((r) => r.bots.includes(bot)).map((r) => r.name);
          expect(selected).toEqual(ofBot.filter((name) => selected.includes(name)));
          if (bot === 'no-such-bot') expect(selected).toEqual([]);
          else
            expect(selected).toEqual(
              expect.arrayContaining(['everything', 'strict-all', 'unordered']),
            );
          if (selected.includes('callbacks')) {
            expect(updateType(update)).toBe('callback_query');
            expect(callbackData(update)?.startsWith('buy:')).toBe(true);
          }
          if (selected.includes('buyers')) {
            expect(command(update, 'Fuzz_Bot')).toBe('/buy');
            expect([1, 2, 3]).toContain(actorId(update));
          }
          if (selected.includes('chat-five')) expect([5, -1001]).toContain(chatId(update));
          if (selected.includes('messages')) {
            expect(['message', 'edited_message']).toContain(updateType(update));
          }
        },
      ),
      fuzzParameters(3000),
    );
  });

  it('answers for values that are not objects at all', () => {
    fc.assert(
      fc.property(jsonish, (value) => {
        const update = value as Update;
        expect(() => [
          updateType(update),
          actorId(update),
          chatId(update),
          command(update),
          laneKeyFor('chat', update, 'd'),
        ]).not.toThrow();
      }),
      fuzzParameters(1000),
    );
  });
});
