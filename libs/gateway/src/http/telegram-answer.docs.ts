/**
 * Telegram's own answer to a call that succeeded, as the drop-in passes it on and
 * `raw/:method` returns it: one schema for both, so the two documents cannot drift.
 */
export const TELEGRAM_OK_BODY = Object.freeze({
  type: 'object',
  required: ['ok', 'result'],
  properties: { ok: { const: true }, result: {} },
});
