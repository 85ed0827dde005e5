import { laneId } from '@relaygram/contracts';
import { UPDATE_SAMPLES, VARIANT_SAMPLES } from './fixtures/updates.fixture';
import { laneKeyFor } from './lane-key';
import type { Update } from './update.types';

const DELIVERY = '01JDXQ7Z5M9V3K8R2T6W4Y0B1C';

describe('laneKeyFor', () => {
  describe('chat ordering', () => {
    it.each<[string, Update, ReturnType<typeof laneKeyFor>]>([
      ['a group message', UPDATE_SAMPLES.message, { kind: 'chat', chatId: -1001234567890 }],
      ['a channel post', UPDATE_SAMPLES.channel_post, { kind: 'chat', chatId: -1009876543210 }],
      ['a callback query', UPDATE_SAMPLES.callback_query, { kind: 'chat', chatId: -1001234567890 }],
      [
        'an inline callback query',
        VARIANT_SAMPLES.inlineCallbackQuery,
        { kind: 'user', userId: 987654321 },
      ],
      ['an inline query', UPDATE_SAMPLES.inline_query, { kind: 'user', userId: 987654321 }],
      ['a poll answer', UPDATE_SAMPLES.poll_answer, { kind: 'user', userId: 987654321 }],
      [
        'an anonymous vote',
        VARIANT_SAMPLES.anonymousPollAnswer,
        { kind: 'user', userId: -1009876543210 },
      ],
      [
        'a business connection',
        UPDATE_SAMPLES.business_connection,
        { kind: 'chat', chatId: 444555666 },
      ],
      ['a poll', UPDATE_SAMPLES.poll, { kind: 'shared' }],
      [
        'an unknown type, by the chat it carries',
        VARIANT_SAMPLES.futureType,
        { kind: 'chat', chatId: -1001234567890 },
      ],
      [
        'an unknown type without a chat, by its `from`',
        { update_id: 2, story_view: { from: { id: 77, is_bot: false, first_name: 'A' } } },
        { kind: 'user', userId: 77 },
      ],
      ['an unknown type with neither', { update_id: 3, story_gone: { id: 5 } }, { kind: 'shared' }],
      ['an update without payload', { update_id: 1, message: 'x' }, { kind: 'shared' }],
    ])('puts %s in %j', (_name, update, expected) => {
      expect(laneKeyFor('chat', update, DELIVERY)).toEqual(expected);
    });

    it('keeps one chat in one lane whatever the update type', () => {
      const lanes = new Set(
        [UPDATE_SAMPLES.message, UPDATE_SAMPLES.callback_query, UPDATE_SAMPLES.chat_member].map(
          (u) => laneId('shop', 'shop-bot', laneKeyFor('chat', u, DELIVERY)),
        ),
      );
      expect([...lanes]).toEqual(['shop.shop-bot.c-1001234567890']);
    });
  });

  it('puts everything in the shared lane under strict ordering', () => {
    for (const update of [
      UPDATE_SAMPLES.message,
      UPDATE_SAMPLES.inline_query,
      UPDATE_SAMPLES.poll,
    ]) {
      expect(laneKeyFor('strict', update, DELIVERY)).toEqual({ kind: 'shared' });
    }
  });

  it('gives each delivery its own lane without ordering', () => {
    expect(laneKeyFor('none', UPDATE_SAMPLES.message, DELIVERY)).toEqual({
      kind: 'single',
      deliveryId: DELIVERY,
    });
    expect(laneKeyFor('none', UPDATE_SAMPLES.message, 'other')).toEqual({
      kind: 'single',
      deliveryId: 'other',
    });
  });

  it('refuses an ordering it does not know', () => {
    expect(() => laneKeyFor('random' as never, UPDATE_SAMPLES.message, DELIVERY)).toThrow(
      'unknown ordering: random',
    );
  });
});
