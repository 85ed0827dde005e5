import fc from 'fast-check';
import { UPDATE_SAMPLES, VARIANT_SAMPLES, sampleUpdate } from './fixtures/updates.fixture';
import { command } from './command-parser';
import { actorId, callbackData, chatId, updateType } from './update-extractors';
import { UPDATE_TYPES, isKnownUpdateType, type Update, type UpdateType } from './update.types';

const ALICE = 123456789;
const BOB = 987654321;
const CAROL = 555000111;
const DANA = 444555666;
const EVE = 222333444;
const SHOP_GROUP = -1001234567890;
const NEWS_CHANNEL = -1009876543210;
const GUEST_GROUP = -1005550001111;

/** [type, actor, chat], from the Bot API field descriptions. */
const EXPECTED: ReadonlyArray<[UpdateType, number | undefined, number | undefined]> = [
  ['message', ALICE, SHOP_GROUP],
  ['edited_message', BOB, BOB],
  ['channel_post', undefined, NEWS_CHANNEL],
  ['edited_channel_post', undefined, NEWS_CHANNEL],
  ['business_connection', DANA, DANA],
  ['business_message', EVE, EVE],
  ['edited_business_message', DANA, EVE],
  ['deleted_business_messages', undefined, EVE],
  ['message_reaction', ALICE, SHOP_GROUP],
  ['message_reaction_count', undefined, NEWS_CHANNEL],
  ['inline_query', BOB, undefined],
  ['chosen_inline_result', BOB, undefined],
  ['callback_query', ALICE, SHOP_GROUP],
  ['shipping_query', ALICE, undefined],
  ['pre_checkout_query', ALICE, undefined],
  ['purchased_paid_media', BOB, undefined],
  ['poll', undefined, undefined],
  ['poll_answer', BOB, undefined],
  ['my_chat_member', CAROL, SHOP_GROUP],
  ['chat_member', CAROL, SHOP_GROUP],
  ['chat_join_request', BOB, NEWS_CHANNEL],
  ['chat_boost', ALICE, NEWS_CHANNEL],
  ['removed_chat_boost', BOB, NEWS_CHANNEL],
  ['guest_message', ALICE, GUEST_GROUP],
  ['stopped_message_generation', undefined, ALICE],
  ['managed_bot', CAROL, undefined],
  ['subscription', BOB, undefined],
];

describe('UPDATE_TYPES', () => {
  it('lists every Update type of the Bot API', () => {
    const required = [
      'message',
      'edited_message',
      'channel_post',
      'edited_channel_post',
      'business_connection',
      'business_message',
      'edited_business_message',
      'deleted_business_messages',
      'message_reaction',
      'message_reaction_count',
      'inline_query',
      'chosen_inline_result',
      'callback_query',
      'shipping_query',
      'pre_checkout_query',
      'purchased_paid_media',
      'poll',
      'poll_answer',
      'my_chat_member',
      'chat_member',
      'chat_join_request',
      'chat_boost',
      'removed_chat_boost',
    ];
    expect(UPDATE_TYPES).toEqual(expect.arrayContaining(required));
    expect(new Set(UPDATE_TYPES).size).toBe(UPDATE_TYPES.length);
  });

  it('has a sample and an expectation for every type', () => {
    expect(Object.keys(UPDATE_SAMPLES).sort()).toEqual([...UPDATE_TYPES].sort());
    expect(EXPECTED.map(([type]) => type).sort()).toEqual([...UPDATE_TYPES].sort());
  });

  it('tells known types from others, including names found on Object.prototype', () => {
    expect(isKnownUpdateType('chat_boost')).toBe(true);
    expect(isKnownUpdateType('story_reply')).toBe(false);
    expect(isKnownUpdateType('constructor')).toBe(false);
    expect(isKnownUpdateType('__proto__')).toBe(false);
  });
});

describe('samples', () => {
  it('are frozen, and sampleUpdate hands out changeable copies', () => {
    expect(Object.isFrozen(UPDATE_SAMPLES.message.message)).toBe(true);
    const copy = sampleUpdate('message', 5) as { update_id: number; message: { text: string } };
    copy.message.text = '/changed';
    expect(copy.update_id).toBe(5);
    expect(sampleUpdate('futureType').update_id).toBe(VARIANT_SAMPLES.futureType.update_id);
    expect(command(UPDATE_SAMPLES.message, 'ThisBot')).toBe('/orders');
  });
});

describe.each(EXPECTED)('%s', (type, actor, chat) => {
  const update = UPDATE_SAMPLES[type];

  it('is recognised by its key', () => {
    expect(updateType(update)).toBe(type);
  });

  it(`has actor ${String(actor)}`, () => {
    expect(actorId(update)).toBe(actor);
  });

  it(`has chat ${String(chat)}`, () => {
    expect(chatId(update)).toBe(chat);
  });
});

describe('variants', () => {
  it.each<[keyof typeof VARIANT_SAMPLES, string, number | undefined, number | undefined]>([
    ['inlineCallbackQuery', 'callback_query', BOB, undefined],
    ['inaccessibleMessageCallbackQuery', 'callback_query', ALICE, SHOP_GROUP],
    ['anonymousMessageReaction', 'message_reaction', SHOP_GROUP, SHOP_GROUP],
    ['anonymousPollAnswer', 'poll_answer', NEWS_CHANNEL, undefined],
    ['unclaimedGiveawayBoost', 'chat_boost', undefined, NEWS_CHANNEL],
    ['privateCommand', 'message', BOB, BOB],
    // A type newer than this code: its `from` and `chat`, as most update objects have.
    ['futureType', 'story_reply', ALICE, SHOP_GROUP],
  ])('%s: type %s, actor %s, chat %s', (name, type, actor, chat) => {
    const update = VARIANT_SAMPLES[name];
    expect(updateType(update)).toBe(type);
    expect(actorId(update)).toBe(actor);
    expect(chatId(update)).toBe(chat);
  });
});

describe('callbackData', () => {
  it('reads callback_query.data', () => {
    expect(callbackData(UPDATE_SAMPLES.callback_query)).toBe('order:confirm:1042');
    expect(callbackData(VARIANT_SAMPLES.inlineCallbackQuery)).toBe('size:39');
  });

  it('is undefined for a game button and for other types', () => {
    expect(callbackData(VARIANT_SAMPLES.gameCallbackQuery)).toBeUndefined();
    expect(callbackData(UPDATE_SAMPLES.message)).toBeUndefined();
    expect(callbackData({ update_id: 1, message: { data: 'order:1' } })).toBeUndefined();
  });

  it('is undefined when data is not a string', () => {
    expect(callbackData({ update_id: 1, callback_query: { id: 'x', data: 42 } })).toBeUndefined();
  });
});

describe('updateType', () => {
  it('skips keys whose value is not an object', () => {
    const update = { update_id: 1, message: null, note: 'x', list: [{}], callback_query: {} };
    expect(updateType(update)).toBe('callback_query');
  });

  it('takes the first object key when several are present', () => {
    expect(updateType({ update_id: 1, poll: {}, message: {} })).toBe('poll');
  });

  it('is undefined when nothing but update_id is there', () => {
    expect(updateType({ update_id: 1 })).toBeUndefined();
    expect(updateType({ update_id: 1, message: null })).toBeUndefined();
  });

  it('accepts keys that exist on Object.prototype without finding its members', () => {
    // Unknown types both: read like any newer type, from their own payload only.
    const update = JSON.parse('{"update_id":1,"__proto__":{"from":{"id":5}}}') as Update;
    expect(updateType(update)).toBe('__proto__');
    expect(actorId(update)).toBe(5);
    expect(chatId(update)).toBeUndefined();
    const ctor = { update_id: 1, constructor: { from: { id: 5 }, chat: { id: 6 } } };
    expect(updateType(ctor)).toBe('constructor');
    expect(actorId(ctor)).toBe(5);
    expect(chatId(ctor)).toBe(6);
    const bare = { update_id: 1, toString: { id: 7 } } as unknown as Update;
    expect(updateType(bare)).toBe('toString');
    expect(actorId(bare)).toBeUndefined();
  });
});

describe('hostile shapes', () => {
  const hostile: ReadonlyArray<[string, unknown]> = [
    ['null', null],
    ['a string', 'message'],
    ['a number', 42],
    ['an array', [{ message: { from: { id: 1 } } }]],
    ['a string payload', { update_id: 1, message: 'hello' }],
    ['a null payload', { update_id: 1, message: null }],
    ['an array payload', { update_id: 1, message: [{ from: { id: 1 } }] }],
    ['from as a string', { update_id: 1, message: { from: '1', chat: 'x' } }],
    ['from as an array', { update_id: 1, message: { from: [1], chat: [2] } }],
    ['ids as strings', { update_id: 1, message: { from: { id: '1' }, chat: { id: '-100' } } }],
    ['fractional ids', { update_id: 1, message: { from: { id: 1.5 }, chat: { id: -0.5 } } }],
    [
      'ids beyond 2^53',
      { update_id: 1, message: { from: { id: 2 ** 53 }, chat: { id: -(2 ** 53) } } },
    ],
    ['boost source as null', { update_id: 1, chat_boost: { chat: null, boost: { source: null } } }],
    ['callback message as a number', { update_id: 1, callback_query: { from: {}, message: 7 } }],
  ];

  it.each(hostile)('%s yields no actor, chat or callback data', (_name, update) => {
    expect(actorId(update as Update)).toBeUndefined();
    expect(chatId(update as Update)).toBeUndefined();
    expect(callbackData(update as Update)).toBeUndefined();
  });

  it('accepts ids up to the largest safe integer, negative included', () => {
    const update = {
      update_id: 1,
      message: { from: { id: Number.MAX_SAFE_INTEGER }, chat: { id: -Number.MAX_SAFE_INTEGER } },
    };
    expect(actorId(update)).toBe(Number.MAX_SAFE_INTEGER);
    expect(chatId(update)).toBe(-Number.MAX_SAFE_INTEGER);
  });

  it('never throws and only yields safe integers, whatever the JSON', () => {
    const payload = fc.oneof(
      fc.jsonValue(),
      fc.record({
        from: fc.jsonValue(),
        user: fc.jsonValue(),
        chat: fc.jsonValue(),
        message: fc.jsonValue(),
        boost: fc.jsonValue(),
        source: fc.jsonValue(),
      }),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...UPDATE_TYPES, 'unknown_type'),
        payload,
        fc.jsonValue(),
        (type, value, extra) => {
          const update = { update_id: 1, [type]: value, extra } as Update;
          for (const id of [actorId(update), chatId(update)]) {
            expect(id === undefined || Number.isSafeInteger(id)).toBe(true);
          }
          const data = callbackData(update);
          expect(data === undefined || typeof data === 'string').toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });
});
