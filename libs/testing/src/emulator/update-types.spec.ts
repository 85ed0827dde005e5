import { DEFAULT_ALLOWED_UPDATES, parseAllowedUpdates, webhookQueueKey } from './update-types';

describe('parseAllowedUpdates', () => {
  it('keeps the setting for anything but a JSON array of strings', () => {
    for (const value of [undefined, '', 'message', '[oops', 42, ['message', 1]]) {
      expect(parseAllowedUpdates(value)).toBeUndefined();
    }
  });

  it('selects the named types, case-insensitively, ignoring unknown ones', () => {
    expect([...(parseAllowedUpdates(['Message', 'poll', 'nonsense']) ?? [])]).toEqual([
      'message',
      'poll',
    ]);
  });

  it('falls back to the default for an array naming no known type', () => {
    expect(parseAllowedUpdates([])).toBe(DEFAULT_ALLOWED_UPDATES);
    expect(parseAllowedUpdates(['nonsense'])).toBe(DEFAULT_ALLOWED_UPDATES);
    expect(DEFAULT_ALLOWED_UPDATES.has('chat_member')).toBe(false);
    expect(DEFAULT_ALLOWED_UPDATES.has('message_reaction')).toBe(false);
    expect(DEFAULT_ALLOWED_UPDATES.has('message_reaction_count')).toBe(false);
    expect(DEFAULT_ALLOWED_UPDATES.has('callback_query')).toBe(true);
  });
});

describe('webhookQueueKey', () => {
  it('queues messages per chat, queries per user and polls per poll', () => {
    expect(webhookQueueKey('message', { chat: { id: -5 }, from: { id: 1 } })).toBe('c-5');
    expect(webhookQueueKey('edited_message', { chat: { id: -5 } })).toBe('c-5');
    expect(
      webhookQueueKey('callback_query', { from: { id: 7 }, message: { chat: { id: 3 } } }),
    ).toBe('q7');
    expect(webhookQueueKey('inline_query', { from: { id: 7 } })).toBe('i7');
    expect(webhookQueueKey('poll_answer', { poll_id: 'p1' })).toBe('op1');
    expect(webhookQueueKey('poll', { id: 'p1' })).toBe('op1');
    expect(webhookQueueKey('purchased_paid_media', { from: { id: 7 } })).toBeUndefined();
  });
});
