/**
 * Field names of the delivery log's stream entries (`RedisKeys.attemptLog`,
 * `RedisKeys.updateLog`). One letter each, and every entry of a stream has the same
 * fields in the same order, so Redis stores the names once per node of the stream.
 */
export const ATTEMPT_LOG_FIELDS = {
  deliveryId: 'd',
  updateId: 'u',
  bot: 'b',
  /** 1 for the first attempt. */
  attempt: 'n',
  /** delivered | retry | dead */
  outcome: 'o',
  /** The HTTP status; '' without an answer. */
  status: 's',
  /** The error kind without an answer (timeout, ECONNREFUSED, expired); else ''. */
  error: 'e',
  durationMs: 't',
  /** The answer's first ATTEMPT_BODY_BYTES bytes, cut on a byte count. */
  body: 'x',
  /** For a retry: when the next attempt is due (ms); else ''. */
  nextAttemptAt: 'r',
} as const;

export const UPDATE_LOG_FIELDS = {
  updateId: 'u',
  /** queued | ignored | duplicate */
  status: 's',
  /** For queued: `<lane> <delivery id>` pairs, space-separated (the route is the lane's first part). */
  deliveries: 'd',
} as const;

/**
 * `log_write(key, cap, max_age, fields)`: appends one entry to a delivery log stream,
 * capped near `cap` entries (MAXLEN ~: whole nodes only, O(1) amortized), without
 * entries older than `max_age` ms (an exact MINID trim: it removes each entry once, and
 * scans at most the first node's ~100 entries when nothing is due), and with a TTL of
 * `max_age` so an idle route's or bot's log disappears. `cap` 0: the log is off.
 *
 * It runs under pcall, after the writes its script's outcome depends on: the log is a
 * record of what happened, never a reason to refuse a delivery, so a log key of the
 * wrong type (written by hand) loses the entry and nothing else; the script goes on. The time is Redis's own (TIME), the clock of the stream's `*` ids, so the age
 * cut and the ids agree whatever the callers' clocks say.
 */
export const DELIVERY_LOG_LUA = `
local function log_write(key, cap, max_age, fields)
  cap = tonumber(cap)
  max_age = tonumber(max_age)
  if not cap or cap <= 0 or not max_age or max_age <= 0 then return end
  pcall(function()
    local t = redis.call('TIME')
    local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    redis.call('XADD', key, 'MAXLEN', '~', cap, '*', unpack(fields))
    redis.call('XTRIM', key, 'MINID', string.format('%.0f', now - max_age))
    redis.call('PEXPIRE', key, max_age)
  end)
end
`;
