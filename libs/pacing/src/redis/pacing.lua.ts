/*
 * The pacing scripts. Each reads the clock once (Redis TIME, so every replica shares
 * one clock; ARGV may give it instead, for tests) and works on one bot's keys, which
 * all start with `<prefix>:outbound:<bot>:`. On Redis Cluster the prefix is a hash
 * tag, so the keys of a call share a slot.
 *
 * They mirror budget/budget-math.ts line for line: the local fallback and the unit
 * tests use that file, and pacing-script.spec.ts checks the two decide alike.
 */

const CLOCK = `
local function clock(given)
  if given ~= '' then return tonumber(given) end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;

/**
 * Finds and takes the earliest slot of one call, or refuses it.
 * KEYS: pauses, bins, chat, group. ARGV: cost, max_wait, transit, chat_interval (0: no
 * chat), chat_burst, group_limit (0: not a group), group_window, bin_width,
 * bin_capacity, ring_size, chat member ('' none), now ('' for TIME).
 * Returns {1, wait_ms, binding} or {0, retry_in_ms, binding}; binding '' when the call
 * may go at once.
 */
export const ACQUIRE_LUA = `${CLOCK}
local cost = tonumber(ARGV[1])
local max_wait = tonumber(ARGV[2])
local transit = tonumber(ARGV[3])
local chat_interval = tonumber(ARGV[4])
local chat_burst = tonumber(ARGV[5])
local group_limit = tonumber(ARGV[6])
local group_window = tonumber(ARGV[7])
local bin_width = tonumber(ARGV[8])
local bin_capacity = tonumber(ARGV[9])
local ring = tonumber(ARGV[10])
local chat = ARGV[11]
local now = clock(ARGV[12])

local earliest = now
local binding = ''
local function raise(time, kind)
  if time and time > earliest then
    earliest = time
    binding = kind
  end
end

local pauses = redis.call('ZMSCORE', KEYS[1], '*', chat == '' and '*' or chat)
raise(tonumber(pauses[1]), 'pause')
raise(tonumber(pauses[2]), 'pause')
local tat, last = 0, 0
local chat_charged = 0
if chat ~= '' then
  -- '<tat>:<last>', one string, so one read and one write per call.
  local state = redis.call('GET', KEYS[3])
  if state then
    local sep = string.find(state, ':', 1, true)
    tat = tonumber(string.sub(state, 1, sep - 1))
    last = tonumber(string.sub(state, sep + 1))
  end
  chat_charged = math.min(cost, chat_burst)
  raise(math.max(last, tat + (chat_charged - chat_burst) * chat_interval), 'chat')
end
local group_charged = 0
if group_limit > 0 then
  group_charged = math.min(cost, group_limit)
  local oldest = tonumber(redis.call('LINDEX', KEYS[4], group_limit - group_charged))
  if oldest then raise(oldest + group_window + transit, 'group') end
end

local horizon = now + max_wait
if earliest > horizon then
  if binding == '' then binding = 'bot' end
  return {0, math.ceil(earliest - now), binding}
end

-- The bot's calendar: a ring of bins, each field holding '<bin>:<count>'; a field
-- holding another bin is a stale one, so the ring needs no cleaning.
local slot
local bin = math.floor(earliest / bin_width)
while true do
  local start = bin * bin_width
  if start > horizon then return {0, math.ceil(start - now), 'bot'} end
  local field = string.format('%d', bin % ring)
  local count = 0
  local held = redis.call('HGET', KEYS[2], field)
  if held then
    local sep = string.find(held, ':', 1, true)
    if sep and string.sub(held, 1, sep - 1) == string.format('%d', bin) then
      count = tonumber(string.sub(held, sep + 1))
    end
  end
  if count == 0 or count + cost <= bin_capacity then
    if start > earliest then
      slot = start
      binding = 'bot'
    else
      slot = earliest
    end
    redis.call('HSET', KEYS[2], field, string.format('%d:%d', bin, count + cost))
    -- Once per bin, not per call: the calendar lives while bins keep being opened.
    if count == 0 then
      redis.call('PEXPIRE', KEYS[2], math.ceil(max_wait + 2 * bin_width) + 1000)
    end
    break
  end
  bin = bin + 1
end

if chat ~= '' then
  local new_tat = math.max(tat, slot + transit) + chat_charged * chat_interval
  redis.call('SET', KEYS[3], string.format('%.3f:%.3f', new_tat, math.max(last, slot)),
    'PX', math.ceil(new_tat - now) + 1000)
  if group_limit > 0 then
    local slots = {}
    for i = 1, group_charged do slots[i] = string.format('%.3f', slot) end
    redis.call('LPUSH', KEYS[4], unpack(slots))
    redis.call('LTRIM', KEYS[4], 0, group_limit - 1)
    redis.call('PEXPIRE', KEYS[4], math.ceil(slot - now + group_window + transit) + 1000)
  end
end
return {1, math.ceil(slot - now), binding}
`;

/**
 * Records a Telegram 429 and pauses the chat it named or, by the rule of
 * budget/pause-scope.ts, the whole bot (member '*').
 * KEYS: pauses, recent-429. ARGV: chat ('' none), retry_after_ms, window_ms,
 * bot_wide_chats, now ('' for TIME). Returns {scope, pause_ms}.
 */
export const PAUSE_LUA = `${CLOCK}
local chat = ARGV[1]
local retry_after = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local bot_wide = tonumber(ARGV[4])
local now = clock(ARGV[5])

local scope = 'bot'
if chat ~= '' then
  redis.call('ZADD', KEYS[2], now, chat)
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window)
  redis.call('PEXPIRE', KEYS[2], window)
  if redis.call('ZCARD', KEYS[2]) < bot_wide then scope = 'chat' end
end
local member = chat
if scope == 'bot' then member = '*' end
local ends = now + retry_after
local held = tonumber(redis.call('ZSCORE', KEYS[1], member))
if not held or held < ends then redis.call('ZADD', KEYS[1], ends, member) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local latest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if latest[2] then
  redis.call('PEXPIRE', KEYS[1], math.ceil(tonumber(latest[2]) - now) + 1000)
end
return {scope, math.ceil(ends - now)}
`;

/**
 * The re-check at a call's slot: how long the longest pause on its bot or chat still
 * lasts (0 when none). KEYS: pauses. ARGV: chat ('' none), now ('' for TIME).
 */
export const PAUSED_FOR_LUA = `${CLOCK}
local now = clock(ARGV[2])
local pauses = redis.call('ZMSCORE', KEYS[1], '*', ARGV[1] == '' and '*' or ARGV[1])
local ends = math.max(tonumber(pauses[1]) or 0, tonumber(pauses[2]) or 0)
if ends <= now then return 0 end
return math.ceil(ends - now)
`;

/**
 * The pauses in force on one bot, for /healthz, the admin page and the metrics.
 * KEYS: pauses. ARGV: limit. Returns {now, member1, end1, member2, end2...}.
 */
export const PAUSES_LUA = `${CLOCK}
local now = clock('')
local found = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[1]))
local out = {string.format('%d', now)}
for i = 1, #found do out[#out + 1] = found[i] end
return out
`;
