/*
 * The pacing scripts. Each reads the clock once (Redis TIME, so every replica shares
 * one clock; ARGV may give it instead, for tests) and works on the keys of
 * `OutboundKeys`, which all start with `<prefix>:outbound:<bot>:`. On Redis Cluster the
 * prefix is a hash tag (`{relaygram}`; see createRedis), so every key of an install,
 * of whatever bot, hashes to one slot: that is what makes a script touching several
 * keys legal there, and it is why one batch may hold reservations of several bots.
 * The batch script builds its chat and group keys from a declared key of the same bot
 * (see ACQUIRE_LUA); every other script's keys are all in its KEYS.
 *
 * They mirror budget/budget-math.ts line for line: the local fallback and the unit
 * tests use that file, and redis-budget.spec.ts checks the two decide alike.
 */

const CLOCK = `
local function clock(given)
  if given ~= '' then return tonumber(given) end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;

/**
 * Finds and takes the earliest slot of each reservation of a batch, in the order given,
 * or refuses it. The batch runs as one script, so it is atomic as a whole; each
 * reservation sees the ones before it, and one that fails (a key of the wrong type)
 * fails alone. A batch reads Redis TIME once, each bot's pauses key once (and its
 * scores only while a pause exists), each chat's state and each bin once, and writes
 * each chat and the calendar once at its end: a busy moment's reservations cost a few
 * commands, not five to seven each.
 *
 * KEYS: pauses and bins of bot 1, of bot 2... A chat's and a group's keys are built
 * here from the bot's pauses key (`<bot's keys>pauses` gives `<bot's keys>chat:<chat>`
 * and `<bot's keys>group:<chat>`, as OutboundKeys names them): they carry its hash tag,
 * so they are in the slot of the keys declared. One argument per reservation instead
 * of four values and one or two keys: ioredis's cost of a call grows with its
 * arguments, and it is paid on the gateway's busiest path.
 * ARGV: bots, sections, then per section (a bot and its parameters) 11 values: bot
 * index, now ('' for TIME), max_wait, transit, chat_interval, chat_burst, group_limit,
 * group_window, bin_width, bin_capacity (0: no bin has room), ring_size. A bot may
 * have several sections (a broadcast's smaller bin_capacity): they share its calendar,
 * which is kept per bot. Then one per reservation,
 * `<section index>:<cost>:<kind><chat>`, kind one character: '-' no chat (and no
 * chat after it), 'p' private, 'g' group or channel.
 * Returns two integers per reservation: a code and a time (ms). Code 0 to 4: it may go
 * in that time, having waited for nothing, a pause, its chat, its group or the bot;
 * -1 to -4: refused for that budget, retry in that time. An error's text instead of
 * the code when that reservation failed.
 */
export const ACQUIRE_LUA = `
local bots = tonumber(ARGV[1])
local section_count = tonumber(ARGV[2])

local redis_now
local function clock(given)
  if given ~= '' then return tonumber(given) end
  if not redis_now then
    local t = redis.call('TIME')
    redis_now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return redis_now
end

local sections = {}
local a = 3
for s = 1, section_count do
  sections[s] = {
    bot = tonumber(ARGV[a]),
    now = clock(ARGV[a + 1]),
    max_wait = tonumber(ARGV[a + 2]),
    transit = tonumber(ARGV[a + 3]),
    chat_interval = tonumber(ARGV[a + 4]),
    chat_burst = tonumber(ARGV[a + 5]),
    group_limit = tonumber(ARGV[a + 6]),
    group_window = tonumber(ARGV[a + 7]),
    bin_width = tonumber(ARGV[a + 8]),
    bin_capacity = tonumber(ARGV[a + 9]),
    ring = tonumber(ARGV[a + 10]),
  }
  a = a + 11
end

local paused = {}
local function pause_ends(bot, chat)
  local key = KEYS[2 * bot - 1]
  if paused[bot] == nil then paused[bot] = redis.call('EXISTS', key) == 1 end
  if not paused[bot] then return nil, nil end
  local ends = redis.call('ZMSCORE', key, '*', chat == '' and '*' or chat)
  return tonumber(ends[1]), tonumber(ends[2])
end

local calendars = {}
local calendar_order = {}
local function calendar(bot)
  local c = calendars[bot]
  if not c then
    c = {bot = bot, held = {}, dirty = {}}
    calendars[bot] = c
    calendar_order[#calendar_order + 1] = c
  end
  return c
end

local function bin_count(c, bot, field, bin)
  local held = c.held[field]
  if held == nil then
    held = false
    local raw = redis.call('HGET', KEYS[2 * bot], string.format('%d', field))
    if raw then
      local sep = string.find(raw, ':', 1, true)
      if sep then
        held = {bin = tonumber(string.sub(raw, 1, sep - 1)), count = tonumber(string.sub(raw, sep + 1))}
      end
    end
    c.held[field] = held
  end
  if held and held.bin == bin then return held.count end
  return 0
end

local chats = {}
local written_chats = {}
local function chat_state(key)
  local state = chats[key]
  if not state then
    state = {tat = 0, last = 0}
    local raw = redis.call('GET', key)
    if raw then
      local sep = string.find(raw, ':', 1, true)
      state.tat = tonumber(string.sub(raw, 1, sep - 1))
      state.last = tonumber(string.sub(raw, sep + 1))
    end
    chats[key] = state
  end
  return state
end

local function reserve(sec, cost, chat, chat_key, group_key)
  local now = sec.now
  local earliest, binding = now, 0
  local bot_end, chat_end = pause_ends(sec.bot, chat)
  if bot_end and bot_end > earliest then earliest, binding = bot_end, 1 end
  if chat_end and chat_end > earliest then earliest, binding = chat_end, 1 end
  local state, chat_charged
  if chat_key then
    state = chat_state(chat_key)
    chat_charged = math.min(cost, sec.chat_burst)
    local allow = math.max(state.last, state.tat + (chat_charged - sec.chat_burst) * sec.chat_interval)
    if allow > earliest then earliest, binding = allow, 2 end
  end
  local group_charged
  if group_key then
    group_charged = math.min(cost, sec.group_limit)
    local oldest = tonumber(redis.call('LINDEX', group_key, sec.group_limit - group_charged))
    if oldest and oldest + sec.group_window + sec.transit > earliest then
      earliest, binding = oldest + sec.group_window + sec.transit, 3
    end
  end

  local horizon = now + sec.max_wait
  if earliest > horizon then
    if binding == 0 then binding = 4 end
    return -binding, math.ceil(earliest - now)
  end
  if sec.bin_capacity < 1 then
    return -4, math.ceil((math.floor(horizon / sec.bin_width) + 1) * sec.bin_width - now)
  end

  local c = calendar(sec.bot)
  local slot, field, count
  local bin = math.floor(earliest / sec.bin_width)
  while true do
    local start = bin * sec.bin_width
    if start > horizon then return -4, math.ceil(start - now) end
    field = bin % sec.ring
    count = bin_count(c, sec.bot, field, bin)
    if count == 0 or count + cost <= sec.bin_capacity then
      if start > earliest then
        slot, binding = start, 4
      else
        slot = earliest
      end
      break
    end
    bin = bin + 1
  end

  if group_key then
    local slots = {}
    for i = 1, group_charged do slots[i] = string.format('%.3f', slot) end
    redis.call('LPUSH', group_key, unpack(slots))
    redis.call('LTRIM', group_key, 0, sec.group_limit - 1)
    redis.call('PEXPIRE', group_key, math.ceil(slot - now + sec.group_window + sec.transit) + 1000)
  end
  if chat_key then
    local new_tat = math.max(state.tat, slot + sec.transit) + chat_charged * sec.chat_interval
    if not state.px then written_chats[#written_chats + 1] = chat_key end
    state.tat = new_tat
    state.last = math.max(state.last, slot)
    state.px = math.ceil(new_tat - now) + 1000
  end
  local held = c.held[field]
  if held and held.bin == bin then
    held.count = count + cost
  else
    held = {bin = bin, count = cost}
    c.held[field] = held
    -- Once per bin, not per call: the calendar lives while bins keep being opened.
    c.ttl = math.max(c.ttl or 0, math.ceil(sec.max_wait + 2 * sec.bin_width) + 1000)
  end
  if not held.dirty then
    held.dirty = true
    c.dirty[#c.dirty + 1] = field
  end
  return binding, math.ceil(slot - now)
end

local bases = {}
for b = 1, bots do
  local pauses = KEYS[2 * b - 1]
  bases[b] = string.sub(pauses, 1, #pauses - #'pauses')
end

local out = {}
local n = 0
for i = a, #ARGV do
  local arg = ARGV[i]
  local c1 = string.find(arg, ':', 1, true)
  local c2 = string.find(arg, ':', c1 + 1, true)
  local sec = sections[tonumber(string.sub(arg, 1, c1 - 1))]
  local cost = tonumber(string.sub(arg, c1 + 1, c2 - 1))
  local kind = string.sub(arg, c2 + 1, c2 + 1)
  local chat = string.sub(arg, c2 + 2)
  local chat_key, group_key
  if kind ~= '-' then
    chat_key = bases[sec.bot] .. 'chat:' .. chat
    if kind == 'g' and sec.group_limit > 0 then group_key = bases[sec.bot] .. 'group:' .. chat end
  end
  local ok, code, ms = pcall(reserve, sec, cost, chat, chat_key, group_key)
  if not ok then
    code = type(code) == 'table' and code.err or tostring(code)
    ms = 0
  end
  out[n + 1] = code
  out[n + 2] = ms
  n = n + 2
end

for i = 1, #written_chats do
  local key = written_chats[i]
  local state = chats[key]
  redis.call('SET', key, string.format('%.3f:%.3f', state.tat, state.last), 'PX', state.px)
end
for i = 1, #calendar_order do
  local c = calendar_order[i]
  for j = 1, #c.dirty do
    local held = c.held[c.dirty[j]]
    redis.call('HSET', KEYS[2 * c.bot], string.format('%d', c.dirty[j]),
      string.format('%d:%d', held.bin, held.count))
  end
  if c.ttl then redis.call('PEXPIRE', KEYS[2 * c.bot], c.ttl) end
end
return out
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
