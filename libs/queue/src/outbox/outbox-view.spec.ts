import { outboxSendView } from './outbox-view';

describe('outboxSendView', () => {
  const base = {
    id: 'f0e1',
    bot: 'main',
    client: 'site',
    method: 'sendMessage',
    chat: '-100123',
    createdAt: Date.UTC(2026, 11, 7, 10),
    updatedAt: Date.UTC(2026, 11, 7, 10, 0, 5),
  };

  it('shows a sent send with its result and the chat it moved to', () => {
    expect(
      outboxSendView({
        ...base,
        status: 'sent',
        attempts: 2,
        result: '{"message_id":5}',
        migratedTo: '-100999',
      }),
    ).toEqual({
      id: 'f0e1',
      status: 'sent',
      method: 'sendMessage',
      chat_id: -100123,
      attempts: 2,
      created_at: '2026-12-07T10:00:00.000Z',
      updated_at: '2026-12-07T10:00:05.000Z',
      result: { message_id: 5 },
      migrated_to_chat_id: -100999,
    });
  });

  it('shows a failed send with its error, and a queued one with its next attempt', () => {
    expect(
      outboxSendView({
        ...base,
        status: 'failed',
        attempts: 1,
        errorCode: 403,
        description: 'Forbidden: bot was blocked by the user',
      }),
    ).toMatchObject({
      error: { error_code: 403, description: 'Forbidden: bot was blocked by the user' },
    });
    const queued = outboxSendView({
      ...base,
      chat: '@shop_news',
      status: 'queued',
      attempts: 1,
      lastError: '429 Too Many Requests: retry after 3',
      nextAttemptAt: Date.UTC(2026, 11, 7, 10, 0, 8),
    });
    expect(queued).toMatchObject({
      chat_id: '@shop_news',
      last_error: '429 Too Many Requests: retry after 3',
      next_attempt_at: '2026-12-07T10:00:08.000Z',
    });
    expect(queued).not.toHaveProperty('error');
  });
});
