import type { RouteMatch } from '@relaygram/config';
import { UPDATE_SAMPLES, VARIANT_SAMPLES } from './fixtures/updates.fixture';
import { matches } from './route-matcher';
import { UPDATE_TYPES, type Update } from './update.types';

const ALICE = 123456789;
const BOB = 987654321;
const SHOP_GROUP = -1001234567890;
const ctx = { botUsername: 'ThisBot' };

// The samples: `message` is Alice's `/orders@ThisBot` in the shop group,
// `callback_query` Alice's `order:confirm:1042` there, `poll` has neither actor nor chat.
const { message, callback_query: callbackQuery, poll, poll_answer: pollAnswer } = UPDATE_SAMPLES;
const future = VARIANT_SAMPLES.futureType;

describe('matches', () => {
  it.each<[string, RouteMatch | undefined]>([
    ['an absent match', undefined],
    ['an empty match', {}],
    ['a match with every field absent', { userIds: undefined, commands: undefined }],
  ])('%s takes every update, unknown types included', (_name, match) => {
    for (const type of UPDATE_TYPES) expect(matches(match, UPDATE_SAMPLES[type], ctx)).toBe(true);
    expect(matches(match, future, ctx)).toBe(true);
    expect(matches(match, { update_id: 1 }, ctx)).toBe(true);
  });

  describe('one field', () => {
    it.each<[string, RouteMatch, boolean]>([
      ['updateTypes hit', { updateTypes: ['callback_query', 'message'] }, true],
      ['updateTypes miss', { updateTypes: ['callback_query'] }, false],
      ['userIds hit', { userIds: [BOB, ALICE] }, true],
      ['userIds miss', { userIds: [BOB] }, false],
      ['chatIds hit', { chatIds: [SHOP_GROUP] }, true],
      ['chatIds miss', { chatIds: [ALICE] }, false],
      ['commands hit', { commands: ['/admin', '/orders'] }, true],
      ['commands miss', { commands: ['/admin'] }, false],
      ['commands stored in another case', { commands: ['/ORDERS'] }, true],
      ['callbackPrefixes on a message', { callbackPrefixes: ['order:'] }, false],
    ])('%s on the message sample: %s', (_name, match, expected) => {
      expect(matches(match, message, ctx)).toBe(expected);
    });

    it('compares callback data by prefix', () => {
      expect(matches({ callbackPrefixes: ['cart:', 'order:'] }, callbackQuery, ctx)).toBe(true);
      expect(matches({ callbackPrefixes: ['order:confirm:1042'] }, callbackQuery, ctx)).toBe(true);
      expect(matches({ callbackPrefixes: ['order:cancel'] }, callbackQuery, ctx)).toBe(false);
      expect(matches({ callbackPrefixes: ['order:confirm:10420'] }, callbackQuery, ctx)).toBe(
        false,
      );
    });

    it('takes an empty prefix as any callback data, but only callback data', () => {
      expect(matches({ callbackPrefixes: [''] }, callbackQuery, ctx)).toBe(true);
      expect(matches({ callbackPrefixes: [''] }, VARIANT_SAMPLES.gameCallbackQuery, ctx)).toBe(
        false,
      );
      expect(matches({ callbackPrefixes: [''] }, message, ctx)).toBe(false);
    });
  });

  it('ANDs fields', () => {
    const admin: RouteMatch = { userIds: [ALICE], commands: ['/orders'] };
    expect(matches(admin, message, ctx)).toBe(true);
    expect(matches({ ...admin, userIds: [BOB] }, message, ctx)).toBe(false);
    expect(matches({ ...admin, commands: ['/admin'] }, message, ctx)).toBe(false);
    const buttons: RouteMatch = {
      updateTypes: ['callback_query'],
      chatIds: [SHOP_GROUP],
      callbackPrefixes: ['order:'],
    };
    expect(matches(buttons, callbackQuery, ctx)).toBe(true);
    expect(matches({ ...buttons, chatIds: [-1009876543210] }, callbackQuery, ctx)).toBe(false);
  });

  it('does not match a rule asking for a field the update does not have', () => {
    expect(matches({ chatIds: [SHOP_GROUP] }, poll, ctx)).toBe(false);
    expect(matches({ userIds: [ALICE] }, poll, ctx)).toBe(false);
    expect(matches({ chatIds: [BOB] }, pollAnswer, ctx)).toBe(false);
    expect(matches({ userIds: [BOB] }, pollAnswer, ctx)).toBe(true);
    expect(matches({ commands: ['/orders'] }, callbackQuery, ctx)).toBe(false);
    expect(matches({ chatIds: [SHOP_GROUP] }, VARIANT_SAMPLES.inlineCallbackQuery, ctx)).toBe(
      false,
    );
  });

  it('matches an anonymous voter or reactor by the chat they acted as', () => {
    expect(matches({ userIds: [-1009876543210] }, VARIANT_SAMPLES.anonymousPollAnswer, ctx)).toBe(
      true,
    );
    expect(matches({ userIds: [SHOP_GROUP] }, VARIANT_SAMPLES.anonymousMessageReaction, ctx)).toBe(
      true,
    );
  });

  describe('an unknown update type', () => {
    it('is routed by updateTypes naming it', () => {
      expect(matches({ updateTypes: ['story_reply'] }, future, ctx)).toBe(true);
      expect(matches({ updateTypes: ['message'] }, future, ctx)).toBe(false);
    });

    it('is routed by user_ids and chat_ids through the `from` and `chat` it carries', () => {
      expect(matches({ userIds: [ALICE] }, future, ctx)).toBe(true);
      expect(matches({ chatIds: [SHOP_GROUP] }, future, ctx)).toBe(true);
      expect(matches({ updateTypes: ['story_reply'], userIds: [ALICE] }, future, ctx)).toBe(true);
      expect(matches({ userIds: [BOB] }, future, ctx)).toBe(false);
      expect(matches({ chatIds: [SHOP_GROUP - 1] }, future, ctx)).toBe(false);
    });

    it('is not matched by commands, even with a text that looks like one', () => {
      const withText = {
        update_id: 1,
        story_reply: {
          from: { id: ALICE },
          chat: { id: SHOP_GROUP },
          text: '/start',
          entities: [{ type: 'bot_command', offset: 0, length: 6 }],
        },
      } as unknown as Update;
      expect(matches({ commands: ['/start'] }, withText, ctx)).toBe(false);
    });
  });

  describe('commands and the bot username', () => {
    it('takes `/cmd@username` only with this bot username', () => {
      const rule: RouteMatch = { commands: ['/orders'] };
      expect(matches(rule, message, { botUsername: 'thisbot' })).toBe(true);
      expect(matches(rule, message, { botUsername: 'otherbot' })).toBe(false);
      expect(matches(rule, message, {})).toBe(false);
      expect(matches(rule, message)).toBe(false);
    });

    it('takes bare commands without a username', () => {
      expect(matches({ commands: ['/start'] }, VARIANT_SAMPLES.privateCommand)).toBe(true);
    });
  });

  it('closes a route whose list is present but empty', () => {
    expect(matches({ userIds: [] }, message, ctx)).toBe(false);
    expect(matches({ updateTypes: [] }, future, ctx)).toBe(false);
    expect(matches({ commands: [] }, message, ctx)).toBe(false);
  });

  it('gives the same answer when a match is used again', () => {
    const rule: RouteMatch = Object.freeze({ userIds: [ALICE] });
    expect(matches(rule, message, ctx)).toBe(true);
    expect(matches(rule, UPDATE_SAMPLES.edited_message, ctx)).toBe(false);
    expect(matches(rule, message, ctx)).toBe(true);
  });

  it('never throws on malformed updates', () => {
    const rule: RouteMatch = {
      updateTypes: ['message'],
      userIds: [1],
      chatIds: [2],
      commands: ['/a'],
      callbackPrefixes: ['x'],
    };
    for (const update of [
      null,
      'x',
      [],
      { update_id: 1, message: 'x' },
      { message: { text: 5 } },
    ]) {
      expect(matches(rule, update as unknown as Update, ctx)).toBe(false);
      expect(matches({}, update as unknown as Update, ctx)).toBe(true);
    }
  });
});
