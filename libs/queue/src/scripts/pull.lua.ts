import { decodeEntry } from '../lanes/delivery-entry';
import { indexDeadLua } from './engine.lua';
import { expectTypeLua } from './lua-checks';
import type { TakeResult } from '../pull/pull-store';
import { scriptLayout, text } from './script-layout';

/**
 * The pull lanes' scripts (pull/pull-store.ts). A pull lane is a plain list of entries
 * in acceptance order (enqueue.lua.ts appends to it, and lists it in its route's pull
 * lanes while non-empty); no drain job touches it and it has no lane-state hash. Its
 * reader state is one hash (`pull-state:<lane>`): `served`, how many head entries a
 * getUpdates has handed out since they were last confirmed (they form a prefix of the
 * lane, since serving always starts at the head); `excluded`, the update types the
 * client's allowed_updates leaves out (`,a,b,`); `poller`, the call that may wait;
 * `polled_at`.
 *
 * Every script here checks the types of the keys it writes before its first write
 * (Lua has no rollback), and keeps the counters exact: an entry leaves its lane
 * confirmed (route `delivered`), filtered out by allowed_updates (route `filtered`) or
 * dead (route `dead`), and each time the route's and the bot's `queued` go down by one.
 *
 * The dead-letter keys of expired entries are not in KEYS: legal on one Redis, and on a
 * cluster because every key of an install shares the `{prefix}` hash tag.
 */
const PULL_COMMON = `
${expectTypeLua('pull')}
local function header_field(entry, pattern)
  return string.match(string.sub(entry, 1, (string.find(entry, '\\n', 1, true) or 513) - 1), pattern)
end
local function update_id(entry)
  return tonumber(header_field(entry, '"u":(%d+)'))
end
-- max_age counts from a re-send for a re-sent entry, else from acceptance.
local function started_at(entry)
  return tonumber(header_field(entry, '"p":(%d+)') or header_field(entry, '"t":(%d+)')) or 0
end
local function delivery_id(entry)
  return string.match(entry, '^{"d":"([^"]+)"')
end
-- The update's type: its key other than update_id (Telegram sends update_id first).
local function update_type(entry)
  local nl = string.find(entry, '\\n', 1, true)
  if not nl then return nil end
  local body = string.sub(entry, nl + 1, nl + 256)
  local first = string.match(body, '^%s*{%s*"([%w_]+)"%s*:')
  if first ~= 'update_id' then return first end
  return string.match(body, '^%s*{%s*"update_id"%s*:%s*%-?%d+%s*,%s*"([%w_]+)"%s*:')
end
local function counted(P, field, n)
  if n <= 0 then return end
  redis.call('HINCRBY', P.stats, 'queued', -n)
  redis.call('HINCRBY', P.stats, field, n)
  redis.call('HINCRBY', P.bot, 'queued', -n)
end
-- Files one entry as a dead letter (the caller pops it and counts it).
local function bury(P, entry, reason, served, now)
  local id = delivery_id(entry)
  if not id then return end
  local key = P.dead_prefix .. id
  redis.call('DEL', key)
  redis.call('HSET', key, 'entry', entry, 'reason', reason, 'dead_at', now,
    'attempts', served and 1 or 0, 'last_error',
    served and 'served to its client, never confirmed' or 'never taken by its client')
  redis.call('PEXPIRE', key, P.dead_ttl)
  ${indexDeadLua('ZADD', ['P.dead_index', 'P.dead_route', 'P.dead_bot'], 'id', 'now', '  ')}
end
local function check_dead_keys(P)
  return expect(P.dead_index, 'zset') or expect(P.dead_route, 'zset') or expect(P.dead_bot, 'zset')
end
-- Entries past max_age at the head go dead as expired: the head is the oldest, since a
-- re-sent entry goes to the tail and starts its max_age there. Returns how many.
local function expire_heads(P, served, now, max_age, at_most)
  local n = 0
  while n < at_most do
    local head = redis.call('LINDEX', P.lane, 0)
    if not head or now - started_at(head) < max_age then break end
    local id = delivery_id(head)
    if id then
      local err = expect(P.dead_prefix .. id, 'hash')
      if err then
        counted(P, 'dead', n)
        return n, served, err
      end
    end
    bury(P, head, 'expired', served > 0, now)
    redis.call('LPOP', P.lane)
    if served > 0 then served = served - 1 end
    n = n + 1
  end
  counted(P, 'dead', n)
  return n, served, nil
end
local function settle_lane(P, served)
  if redis.call('LLEN', P.lane) == 0 then
    redis.call('SREM', P.lanes, P.lane_id)
    served = 0
  end
  redis.call('HSET', P.state, 'served', served)
end
`;

/**
 * The KEYS and ARGV every pull script starts with: the lane, its pull state, the
 * route's pull lanes, route stats, bot stats, dead index, dead by route, dead by bot;
 * lane id, dead-letter key prefix, dead-letter TTL (ms), now (ms).
 */
export const PULL = scriptLayout({
  keys: ['lane', 'state', 'lanes', 'stats', 'bot', 'deadIndex', 'deadByRoute', 'deadByBot'],
  args: ['laneId', 'deadPrefix', 'deadTtlMs', 'now'],
});

const PULL_HEAD = `
local P = {lane = ${PULL.K.lane}, state = ${PULL.K.state}, lanes = ${PULL.K.lanes}, stats = ${PULL.K.stats}, bot = ${PULL.K.bot},
  dead_index = ${PULL.K.deadIndex}, dead_route = ${PULL.K.deadByRoute}, dead_bot = ${PULL.K.deadByBot},
  lane_id = ${PULL.A.laneId}, dead_prefix = ${PULL.A.deadPrefix}, dead_ttl = ${PULL.A.deadTtlMs}, now = tonumber(${PULL.A.now})}
${PULL_COMMON}
local err = expect(P.lane, 'list') or expect(P.state, 'hash') or expect(P.lanes, 'set')
  or expect(P.stats, 'hash') or expect(P.bot, 'hash') or check_dead_keys(P)
if err then return err end
`;

/**
 * ARGV after PULL's: the call's token; 'claim' (a new call: it becomes the lane's
 * poller, and a waiting older call is told on the notice channel) or 'check' (a waiting
 * call looks again: refused when another call has claimed the lane since); offset (''
 * for none); limit; 1 when the call waits if nothing is there (it stays the poller);
 * max_age (ms); the new excluded types (`,a,b,`; '-' keeps the remembered ones);
 * allowed_updates as the client gave them (JSON, kept for getWebhookInfo); at most this
 * many entries scanned or expired; the route's notice channel.
 */
export const PULL_TAKE = scriptLayout({
  after: PULL,
  keys: [],
  args: [
    'token',
    'mode',
    'offset',
    'limit',
    'waits',
    'maxAgeMs',
    'excluded',
    'allowed',
    'atMost',
    'noticeChannel',
  ],
});

/**
 * One getUpdates step: confirm, expire, take.
 * Returns {'conflict'} or {'ok', confirmed, expired, filtered, entry...}.
 *
 * Confirmation, like Telegram's offset: an entry is confirmed once served and a later
 * call names an offset above its update_id. Only served entries can be confirmed, so an
 * entry accepted after a restart of update_ids (lower ids, after a quiet week) is never
 * dropped unseen. Since a client handles a batch in order, an offset of N + 1 also
 * confirms every entry served before the one with update_id N: acceptance order and
 * update_id order differ when a webhook delivers several chats at once.
 * A negative offset -k forgets everything but the last k entries (counted confirmed).
 */
const T = PULL_TAKE.A;

export const PULL_TAKE_LUA = `
${PULL_HEAD}
local token, mode, offset, limit = ${T.token}, ${T.mode}, tonumber(${T.offset}), tonumber(${T.limit})
local waits, max_age, excluded_arg, at_most = ${T.waits} == '1', tonumber(${T.maxAgeMs}), ${T.excluded}, tonumber(${T.atMost})
local st = redis.call('HMGET', P.state, 'served', 'excluded', 'poller')
if mode == 'check' and st[3] ~= token then return {'conflict'} end
if mode == 'claim' and st[3] and st[3] ~= token then redis.call('PUBLISH', ${T.noticeChannel}, P.lane_id) end
local served = tonumber(st[1]) or 0
local excluded = st[2] or ''
if excluded_arg ~= '-' then
  excluded = excluded_arg
  redis.call('HSET', P.state, 'excluded', excluded, 'allowed', ${T.allowed})
end
redis.call('HSET', P.state, 'polled_at', P.now)

local confirmed = 0
if offset and offset < 0 then
  local len = redis.call('LLEN', P.lane)
  local forget = len + offset
  if forget > 0 then
    redis.call('LTRIM', P.lane, forget, -1)
    confirmed = forget
    served = math.max(0, served - forget)
  end
elseif offset and offset > 0 and served > 0 then
  local heads = redis.call('LRANGE', P.lane, 0, served - 1)
  local cut = 0
  local ids = {}
  for i = 1, #heads do
    ids[i] = update_id(heads[i])
    if ids[i] == offset - 1 then cut = i end
  end
  local kept = {}
  for i = 1, #heads do
    if i > cut and (ids[i] == nil or ids[i] >= offset) then kept[#kept + 1] = heads[i] end
  end
  confirmed = #heads - #kept
  if confirmed > 0 then
    redis.call('LTRIM', P.lane, #heads, -1)
    for i = #kept, 1, -1 do redis.call('LPUSH', P.lane, kept[i]) end
    served = #kept
  end
end
counted(P, 'delivered', confirmed)

local expired, e
expired, served, e = expire_heads(P, served, P.now, max_age, at_most)
if e then
  settle_lane(P, served)
  return e
end

local taken, scanned, filtered, pos = {}, 0, 0, 0
while #taken < limit and scanned < at_most do
  local chunk = redis.call('LRANGE', P.lane, pos, pos + limit - 1)
  if #chunk == 0 then break end
  for i = 1, #chunk do
    if #taken >= limit then break end
    scanned = scanned + 1
    local t = excluded ~= '' and update_type(chunk[i]) or nil
    if t and string.find(excluded, ',' .. t .. ',', 1, true) then
      filtered = filtered + 1
    else
      taken[#taken + 1] = chunk[i]
    end
  end
  pos = pos + #chunk
  if filtered == 0 then break end
end
if filtered > 0 then
  redis.call('LTRIM', P.lane, scanned, -1)
  for i = #taken, 1, -1 do redis.call('LPUSH', P.lane, taken[i]) end
  counted(P, 'filtered', filtered)
end
served = #taken + math.max(0, served - scanned)
settle_lane(P, served)
-- Only a call that goes on waiting stays the lane's poller; once answered it is done.
if waits and #taken == 0 then
  redis.call('HSET', P.state, 'poller', token)
elseif mode == 'claim' or st[3] == token then
  redis.call('HDEL', P.state, 'poller')
end
local out = {'ok', confirmed, expired, filtered}
for i = 1, #taken do out[#out + 1] = taken[i] end
return out
`;

/** PULL's KEYS and ARGV only. */
export const PULL_DROP = scriptLayout({ after: PULL, keys: [], args: [] });

/**
 * deleteWebhook with drop_pending_updates: every entry of the lane is confirmed (route
 * `delivered`), for this client only. Returns how many were dropped.
 */
export const PULL_DROP_LUA = `
${PULL_HEAD}
local n = redis.call('LLEN', P.lane)
if n > 0 then
  redis.call('DEL', P.lane)
  counted(P, 'delivered', n)
end
settle_lane(P, 0)
return n
`;

/** ARGV after PULL's: max_age (ms), at most this many entries. */
export const PULL_EXPIRE = scriptLayout({ after: PULL, keys: [], args: ['maxAgeMs', 'atMost'] });

/**
 * Up to `atMost` head entries past max_age go dead as expired, whether or not a client
 * polls. Returns how many.
 */
export const PULL_EXPIRE_LUA = `
${PULL_HEAD}
local served = tonumber(redis.call('HGET', P.state, 'served')) or 0
local n, left, e = expire_heads(P, served, P.now, tonumber(${PULL_EXPIRE.A.maxAgeMs}), tonumber(${PULL_EXPIRE.A.atMost}))
settle_lane(P, left)
if e then return e end
return n
`;

/** ARGV after PULL's: at most this many entries, the reason. */
export const PULL_KILL = scriptLayout({ after: PULL, keys: [], args: ['atMost', 'reason'] });

/**
 * A removed route: up to `atMost` entries of the lane go dead with `reason`
 * (route_removed). Returns {killed, 'done'|'more'}; the lane's reader state goes with
 * its last entry.
 */
export const PULL_KILL_LUA = `
${PULL_HEAD}
local served = tonumber(redis.call('HGET', P.state, 'served')) or 0
local n = 0
while n < tonumber(${PULL_KILL.A.atMost}) do
  local head = redis.call('LINDEX', P.lane, 0)
  if not head then break end
  local id = delivery_id(head)
  if id then
    err = expect(P.dead_prefix .. id, 'hash')
    if err then break end
  end
  bury(P, head, ${PULL_KILL.A.reason}, served > 0, P.now)
  redis.call('LPOP', P.lane)
  if served > 0 then served = served - 1 end
  n = n + 1
end
counted(P, 'dead', n)
if redis.call('LLEN', P.lane) == 0 then
  redis.call('SREM', P.lanes, P.lane_id)
  redis.call('DEL', P.state)
  if err then return err end
  return {n, 'done'}
end
redis.call('HSET', P.state, 'served', served)
if err then return err end
return {n, 'more'}
`;

/** KEYS after PULL's: the dead letter. ARGV: delivery id, entry, the route's notice channel. */
export const PULL_REPLAY = scriptLayout({
  after: PULL,
  keys: ['deadLetter'],
  args: ['deliveryId', 'entry', 'noticeChannel'],
});

/**
 * Re-send a dead letter of a pull route: it goes to the tail of its lane for the client
 * to take, the dead letter goes, and waiting getUpdates calls are told, in one step.
 * Returns 'missing' or 'queued'.
 */
export const PULL_REPLAY_LUA = `
${PULL_HEAD}
if redis.call('EXISTS', ${PULL_REPLAY.K.deadLetter}) == 0 then return 'missing' end
redis.call('RPUSH', P.lane, ${PULL_REPLAY.A.entry})
redis.call('SADD', P.lanes, P.lane_id)
redis.call('HINCRBY', P.stats, 'queued', 1)
redis.call('HINCRBY', P.bot, 'queued', 1)
redis.call('DEL', ${PULL_REPLAY.K.deadLetter})
${indexDeadLua('ZREM', ['P.dead_index', 'P.dead_route', 'P.dead_bot'], PULL_REPLAY.A.deliveryId, undefined)}
redis.call('PUBLISH', ${PULL_REPLAY.A.noticeChannel}, P.lane_id)
return 'queued'
`;

export function parsePullTakeReply(reply: unknown): TakeResult {
  const parts = reply as unknown[];
  if (text(parts[0]) === 'conflict') return { kind: 'conflict' };
  return {
    kind: 'ok',
    confirmed: Number(text(parts[1])),
    expired: Number(text(parts[2])),
    filtered: Number(text(parts[3])),
    updates: (parts.slice(4) as Buffer[]).map((raw) => decodeEntry(raw).body),
  };
}

/** How many entries a drop or an expiry moved. */
export function parsePullCount(reply: unknown): number {
  return Number(reply);
}

export function parsePullKillReply(reply: unknown): { killed: number; done: boolean } {
  const [killed, state] = reply as unknown[];
  return { killed: Number(killed), done: text(state) === 'done' };
}

export function parsePullReplayReply(reply: unknown): 'queued' | 'missing' {
  return text(reply) === 'queued' ? 'queued' : 'missing';
}
