import {
  ARMED_JOB_PREFIX,
  DEFAULT_ROUTE_SLOTS,
  DISPATCHER_PRESENCE_TTL_MS,
  WAKE_JOB_PREFIX,
} from '@relaygram/contracts';
import { expectTypeLua } from './lua-checks';

/**
 * The lane engine's Lua, shared by every script that moves a lane (SPEC section 5,
 * libs/queue/README.md). A lane is in exactly one state:
 * - idle: its list is empty and it has no state hash;
 * - ready: non-empty, unowned, listed once in its route's ready list (state `q` = `r`)
 *   or, while its head backs off, in the route's delayed set (`q` = `d`);
 * - owned: by one drain job (state `job`), fenced by the lane's generation (`gen`) and
 *   the job's BullMQ lock token.
 * Every move to ready or delayed gives the lane a new generation, so a job that held it
 * before can change nothing any more.
 *
 * Scripts that touch a route take the same leading KEYS and ARGV (`ROUTE_KEYS`,
 * `COMMON_ARGV`). Some lane keys are not declared in KEYS: a lane popped from a list.
 * That is legal on one Redis, and on a Redis Cluster only because every key of an
 * install shares one hash tag (`redis.prefix: "{relaygram}"`). Keep it that way.
 * (Hand-offs are published on a channel, which a cluster carries to every node.)
 */

/** KEYS[1..9] of every route script. */
export const ROUTE_KEY_COUNT = 9;
/** ARGV[1..5] of every route script; a script's own arguments start at ARGV[6]. */
export const COMMON_ARGV_COUNT = 5;

/**
 * KEYS[1] route's lane set, [2] ready list, [3] delayed set, [4] drain jobs, [5] drain
 * state, [6] idle jobs, [7] route stats, [8] sequence, [9] dispatchers.
 * ARGV[1] lane key prefix, [2] lane-state key prefix, [3] inbox channel prefix, [4] now
 * (ms, the caller's clock, for backoff), [5] route name.
 */
const ROUTE_PRELUDE = `
local G = {lane = ARGV[1], state = ARGV[2], inbox = ARGV[3], now = tonumber(ARGV[4]),
  seq = KEYS[8], dispatchers = KEYS[9], arms = {}, wakes = {}}
local R = {lanes = KEYS[1], ready = KEYS[2], delayed = KEYS[3], drains = KEYS[4],
  drain = KEYS[5], idle = KEYS[6], stats = KEYS[7], name = ARGV[5]}
`;

/**
 * The functions. `R` is a route table as above (the enqueue script builds one per
 * delivery); `G.arms` and `G.wakes` collect the BullMQ jobs the caller must add.
 */
const ENGINE_LIB = `
-- Liveness of dispatchers is judged on Redis's clock, so replicas' clocks may differ.
local function redis_ms()
  if not G.time then
    local t = redis.call('TIME')
    G.time = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return G.time
end

-- The head of a lane with its attempt state, counting an attempt on it first when
-- \`count\`: {lane, gen, entry, attempts, c5xx, last_status, last_body, last_error}.
-- A first attempt has no retry state to read (a popped head takes its state along).
local function head_of(lane, gen, count)
  local sk = G.state .. lane
  local attempts
  if count then
    attempts = redis.call('HINCRBY', sk, 'attempts', 1)
  else
    attempts = tonumber(redis.call('HGET', sk, 'attempts') or '0')
  end
  local entry = redis.call('LINDEX', G.lane .. lane, 0)
  if attempts <= 1 then return {lane, gen, entry, attempts, '0', false, false, false} end
  local s = redis.call('HMGET', sk, 'c5xx', 'last_status', 'last_body', 'last_error')
  return {lane, gen, entry, attempts, s[1] or '0', s[2] or false, s[3] or false, s[4] or false}
end

-- Makes \`job\` the lane's owner and begins its head. \`listed\`: the lane was in the
-- ready list or the delayed set (its state has a \`q\`).
local function own(r, job, lane, gen, listed)
  local sk = G.state .. lane
  redis.call('HSET', sk, 'job', job)
  if listed then redis.call('HDEL', sk, 'q') end
  redis.call('HSET', r.drains, job, 'l' .. lane)
  return head_of(lane, gen or redis.call('HGET', sk, 'gen'), true)
end

-- A hand-off as one message for a dispatcher's channel: the head's fields, lengths for the
-- two free texts, then the texts and the entry's bytes as stored.
local function encode_hand_off(job, h)
  local last_error, last_body = h[8] or '', h[7] or ''
  return table.concat({job, h[1], h[2], h[4], h[5], h[6] or '', #last_error, #last_body, ''}, '\\n')
    .. last_error .. last_body .. h[3]
end

-- Gives a lane to the job that began waiting last on a live dispatcher, if any, and
-- tells that dispatcher on its channel. A message nobody receives (its connection was
-- down) is not lost work: the lane is recorded as the job's, and the job's retire at
-- the end of its wait returns it.
-- Waiters of a dispatcher gone silent are dropped on the way: their jobs stop counting
-- as armed (\`x\`) and count again when BullMQ re-runs them after their lock expires.
local function hand_off(r, lane, gen)
  while true do
    local waiter = redis.call('LPOP', r.idle)
    if not waiter then return false end
    local bar = string.find(waiter, '|', 1, true)
    local dispatcher, job = string.sub(waiter, 1, bar - 1), string.sub(waiter, bar + 1)
    if redis.call('HGET', r.drains, job) == 'i' .. dispatcher then
      if (tonumber(redis.call('ZSCORE', G.dispatchers, dispatcher) or '0') or 0) > redis_ms() then
        redis.call('PUBLISH', G.inbox .. dispatcher, encode_hand_off(job, own(r, job, lane, gen, false)))
        return true
      end
      redis.call('HSET', r.drains, job, 'x')
      redis.call('HINCRBY', r.drain, 'armed', -1)
    end
  end
end

-- Arms new drain jobs while more lanes wait (ready, or due) than armed jobs that have
-- not started yet, up to the route's slots on every live dispatcher. Jobs that hold a
-- lane take the next one when they finish, but a slow target must not keep a waiting
-- lane from a free slot.
local function arm(r)
  local d = redis.call('HMGET', r.drain, 'armed', 'pending', 'slots')
  local armed, pending = tonumber(d[1] or '0') or 0, tonumber(d[2] or '0') or 0
  local waiting = redis.call('LLEN', r.ready) + redis.call('ZCOUNT', r.delayed, '-inf', G.now)
  if waiting <= pending then return end
  local live = redis.call('ZCOUNT', G.dispatchers, redis_ms(), '+inf')
  local slots = tonumber(d[3] or '${DEFAULT_ROUTE_SLOTS}') or ${DEFAULT_ROUTE_SLOTS}
  local n = math.min(waiting - pending, slots * math.max(live, 1) - armed)
  if n <= 0 then return end
  for _ = 1, n do
    local job = '${ARMED_JOB_PREFIX}' .. redis.call('INCR', G.seq)
    redis.call('HSET', r.drains, job, 'a' .. G.now)
    G.arms[#G.arms + 1] = r.name
    G.arms[#G.arms + 1] = job
  end
  redis.call('HINCRBY', r.drain, 'armed', n)
  redis.call('HINCRBY', r.drain, 'pending', n)
end

-- Makes sure a wake job runs at \`at\` (ms) at the latest, for a lane backing off until
-- then: no job may be around to see it come due. A wake already set for a time between
-- now and \`at\` does.
local function want_wake(r, at)
  local w = tonumber(redis.call('HGET', r.drain, 'wake_at') or '0') or 0
  if w >= G.now and w <= at then return end
  redis.call('HSET', r.drain, 'wake_at', at)
  G.wakes[#G.wakes + 1] = r.name
  G.wakes[#G.wakes + 1] = '${WAKE_JOB_PREFIX}' .. redis.call('INCR', G.seq)
  G.wakes[#G.wakes + 1] = at
end

-- A lane already due needs no wake: arm() counts it, and a claim takes it first.
local function check_wake(r)
  local first = redis.call('ZRANGE', r.delayed, 0, 0, 'WITHSCORES')
  if first[1] and tonumber(first[2]) > G.now then want_wake(r, tonumber(first[2])) end
end

-- Puts a non-empty lane that no job holds (any more) where a drain job finds it, under
-- a new generation: a backing-off head to the delayed set; else straight to a waiting
-- job, or to the tail of the ready list (arming a job if none will come). \`fresh\`: the
-- lane was idle until now (no state but what the caller just wrote).
local function schedule(r, lane, fresh)
  local sk = G.state .. lane
  local gen = redis.call('INCR', G.seq)
  local next_at = 0
  if not fresh then
    redis.call('HDEL', sk, 'job')
    next_at = tonumber(redis.call('HGET', sk, 'next_at') or '0') or 0
  end
  -- Listed first, flagged after: a failure in between leaves the lane unflagged, which
  -- the reconciler's repair takes for unlisted.
  if next_at > G.now then
    redis.call('ZADD', r.delayed, next_at, lane)
    redis.call('HSET', sk, 'gen', gen, 'q', 'd')
    want_wake(r, next_at)
    return
  end
  redis.call('HSET', sk, 'gen', gen)
  if not hand_off(r, lane, gen) then
    redis.call('RPUSH', r.ready, lane)
    redis.call('HSET', sk, 'q', 'r')
    arm(r)
  end
end

-- The next lane for a job with none: a due backing-off lane first (it has waited
-- longest), else the head of the ready list. Returns the begun head, or nil.
local function claim_next(r, job)
  while true do
    local lane = redis.call('ZRANGEBYSCORE', r.delayed, '-inf', G.now, 'LIMIT', 0, 1)[1]
    if lane then
      redis.call('ZREM', r.delayed, lane)
    else
      lane = redis.call('LPOP', r.ready)
    end
    if not lane then return nil end
    -- A lane emptied behind the engine's back (by hand) is released, not claimed.
    if redis.call('LLEN', G.lane .. lane) > 0 then return own(r, job, lane, nil, true) end
    redis.call('DEL', G.state .. lane)
    redis.call('SREM', r.lanes, lane)
  end
end

local function end_job(r, job)
  if redis.call('HGET', r.drains, job) ~= 'x' then
    redis.call('HINCRBY', r.drain, 'armed', -1)
  end
  redis.call('HDEL', r.drains, job)
  check_wake(r)
  -- A job that ends while work waits (its lifetime is over, or it is shutting down)
  -- leaves a slot free: arm a successor.
  arm(r)
  return {'end'}
end

-- A job with nothing to do waits for a hand-off when it names its dispatcher, else ends.
-- A waiting job is told when the earliest backing-off lane comes due: hand-offs never
-- carry those, so it retires then and claims the lane (a wake job may be stuck behind
-- waiting jobs in BullMQ's own slots).
local function idle_or_end(r, job, dispatcher)
  if dispatcher == '' then return end_job(r, job) end
  redis.call('HSET', r.drains, job, 'i' .. dispatcher)
  redis.call('LPUSH', r.idle, dispatcher .. '|' .. job)
  check_wake(r)
  local first = redis.call('ZRANGE', r.delayed, 0, 0, 'WITHSCORES')
  if first[1] then return {'idle', first[2]} end
  return {'idle'}
end

local function next_step(r, job, dispatcher)
  local h = claim_next(r, job)
  if h then
    -- A backlog: more jobs may be due (slots grew: a dispatcher joined, a reload raised
    -- concurrency), and nothing else arms while no lane is newly scheduled.
    if redis.call('LLEN', r.ready) > 0 then arm(r) end
    return {'head', unpack(h)}
  end
  return idle_or_end(r, job, dispatcher)
end

local function reply(step)
  return {step, G.arms, G.wakes}
end
`;

/** The prelude and functions for a script on one route. */
function routeScript(body: string): string {
  return `${ROUTE_PRELUDE}${ENGINE_LIB}${body}`;
}

/**
 * The engine's functions for a script that builds its own `G` (and route tables), as
 * the enqueue script does: G = {lane, state, inbox, now, seq, dispatchers, arms, wakes}.
 */
export const ENGINE_LUA = ENGINE_LIB;

/** Stops a script with {'stale'} unless the caller still holds its job's BullMQ lock. */
const LOCK_FENCE = (lockKey: string, token: string) => `
if redis.call('GET', ${lockKey}) ~= ${token} then return reply({'stale'}) end
`;

/**
 * A drain job starts (or BullMQ re-runs it after a crash).
 * KEYS[10] the job's lock. ARGV[6] job id, ARGV[7] lock token, ARGV[8] dispatcher to
 * wait on ('' to end instead of waiting).
 * Returns {step, arms, wakes}; step is {'stale'} | {'idle', earliest due ms?} | {'end'} |
 * {'head', lane, gen, entry, attempts, c5xx, last_status, last_body, last_error}.
 */
export const START_LUA = routeScript(`
${LOCK_FENCE('KEYS[10]', 'ARGV[7]')}
local job, dispatcher = ARGV[6], ARGV[8]
local st = redis.call('HGET', R.drains, job)
if not st or st == 'x' then
  -- A wake job, or one the reconciler dropped or un-counted: it counts from now on.
  redis.call('HINCRBY', R.drain, 'armed', 1)
  redis.call('HSET', R.drains, job, 'f')
else
  local kind = string.sub(st, 1, 1)
  if kind == 'a' then
    redis.call('HINCRBY', R.drain, 'pending', -1)
  elseif kind == 'i' then
    redis.call('LREM', R.idle, 0, string.sub(st, 2) .. '|' .. job)
  elseif kind == 'l' then
    local lane = string.sub(st, 2)
    local sk = G.state .. lane
    if redis.call('HGET', sk, 'job') == job and redis.call('LLEN', G.lane .. lane) > 0 then
      -- A re-run: the head may have gone out already. Take the lane under a new
      -- generation, so the earlier run (if it still runs) is stale, and send it again.
      local gen = redis.call('INCR', G.seq)
      redis.call('HSET', sk, 'gen', gen)
      return reply({'head', unpack(head_of(lane, gen, true))})
    end
  end
end
return reply(next_step(R, job, dispatcher))
`);

/**
 * A job finished an attempt on the head of the lane it holds, and goes on.
 * KEYS[10] lane, [11] lane state, [12] the job's lock, [13] the bot's stats, [14] dead
 * letter, [15] dead index, [16] dead by route, [17] dead by bot, [18] own lane, [19]
 * own lane state (detach).
 * ARGV[6] job id, [7] lock token, [8] lane id, [9] generation, [10] head prefix,
 * [11] outcome: 'delivered' | 'dead' | 'retry' (the head backs off in its lane) |
 * 'detach' (it backs off in a lane of its own: a spread lane's retry) | 'none' (no
 * attempt was made: the lane is handed back as it is),
 * [12] then: 'continue' (the next head of this lane) | 'yield' (another lane if one
 * waits) | 'stop' (hand the lane on and end the job), [13] dispatcher to wait on ('' to
 * end when nothing is ready), [14] dead-letter TTL (ms), [15] delivery id, [16] own lane
 * id, [17] consecutive 5xx, [18] last status, [19] last error, [20] next attempt at
 * (ms), [21] last body, then for 'dead': field, value pairs of the dead letter.
 * Returns {step, arms, wakes} as START.
 *
 * Crash analysis: Redis runs the script whole or not at all. Every check comes before
 * the first write; the counters are written before the head is popped, and the dead
 * letter's keys are type-checked first, so no failure can pop a head it did not file.
 */
export const FINISH_LUA = routeScript(`
${LOCK_FENCE('KEYS[12]', 'ARGV[7]')}
local job, lane, gen, prefix = ARGV[6], ARGV[8], ARGV[9], ARGV[10]
local outcome, after, dispatcher = ARGV[11], ARGV[12], ARGV[13]
local owner = redis.call('HMGET', KEYS[11], 'gen', 'job')
if owner[1] ~= gen or owner[2] ~= job then return reply({'stale'}) end
local head = redis.call('LINDEX', KEYS[10], 0)
if not head or string.sub(head, 1, #prefix) ~= prefix then return reply({'stale'}) end
if (#ARGV - 21) % 2 ~= 0 then
  return redis.error_reply('ERR relaygram finish: malformed dead-letter fields')
end
${expectTypeLua('finish')}
if outcome == 'dead' then
  local err = expect(KEYS[14], 'hash') or expect(KEYS[15], 'zset') or expect(KEYS[16], 'zset')
    or expect(KEYS[17], 'zset')
  if err then return err end
elseif outcome == 'detach' then
  local err = expect(KEYS[18], 'list') or expect(KEYS[19], 'hash')
  if err then return err end
end

local held = true
if outcome == 'delivered' or outcome == 'dead' then
  redis.call('HINCRBY', R.stats, 'queued', -1)
  redis.call('HINCRBY', KEYS[13], 'queued', -1)
  if outcome == 'dead' then
    local fields = {'entry', head}
    for i = 22, #ARGV do fields[#fields + 1] = ARGV[i] end
    -- A re-sent delivery that dies again must not keep fields of its earlier death.
    redis.call('DEL', KEYS[14])
    redis.call('HSET', KEYS[14], unpack(fields))
    redis.call('PEXPIRE', KEYS[14], ARGV[14])
    redis.call('ZADD', KEYS[15], G.now, ARGV[15])
    redis.call('ZADD', KEYS[16], G.now, ARGV[15])
    redis.call('ZADD', KEYS[17], G.now, ARGV[15])
    redis.call('HINCRBY', R.stats, 'dead', 1)
  else
    redis.call('HINCRBY', R.stats, 'delivered', 1)
  end
  redis.call('LPOP', KEYS[10])
  redis.call('HDEL', KEYS[11], 'attempts', 'c5xx', 'last_status', 'last_body', 'last_error', 'next_at')
elseif outcome == 'retry' then
  redis.call('HSET', KEYS[11], 'c5xx', ARGV[17], 'last_status', ARGV[18], 'last_error', ARGV[19],
    'next_at', ARGV[20], 'last_body', ARGV[21])
  redis.call('HSET', R.stats, 'last_error', ARGV[19], 'last_status', ARGV[18], 'last_error_at', G.now)
  schedule(R, lane)
  held = false
elseif outcome == 'detach' then
  local attempts = redis.call('HGET', KEYS[11], 'attempts') or '0'
  redis.call('HSET', R.stats, 'last_error', ARGV[19], 'last_status', ARGV[18], 'last_error_at', G.now)
  redis.call('LPOP', KEYS[10])
  redis.call('HDEL', KEYS[11], 'attempts', 'c5xx', 'last_status', 'last_body', 'last_error', 'next_at')
  redis.call('RPUSH', KEYS[18], head)
  if redis.call('EXISTS', KEYS[19]) == 0 then
    redis.call('HSET', KEYS[19], 'attempts', attempts, 'c5xx', ARGV[17], 'last_status', ARGV[18],
      'last_error', ARGV[19], 'next_at', ARGV[20], 'last_body', ARGV[21])
    redis.call('SADD', R.lanes, ARGV[16])
    schedule(R, ARGV[16])
  end
end

if held then
  if outcome ~= 'none' and redis.call('LLEN', KEYS[10]) == 0 then
    redis.call('DEL', KEYS[11])
    redis.call('SREM', R.lanes, lane)
  elseif after == 'continue' then
    return reply({'head', unpack(head_of(lane, gen, true))})
  elseif after == 'yield' and redis.call('LLEN', R.ready) == 0
      and #redis.call('ZRANGEBYSCORE', R.delayed, '-inf', G.now, 'LIMIT', 0, 1) == 0 then
    -- Nothing else waits: keep going rather than hand the lane to ourselves.
    return reply({'head', unpack(head_of(lane, gen, true))})
  else
    schedule(R, lane)
  end
end
if after == 'stop' then return reply(end_job(R, job)) end
return reply(next_step(R, job, dispatcher))
`);

/**
 * A waiting job's wait is over (or its dispatcher is stopping): it ends, unless a lane
 * was handed to it meanwhile, whose head is then returned (already begun by the
 * hand-off, whether or not the message arrived), or a lane is due or ready, which it
 * claims.
 * KEYS[10] the job's lock. ARGV[6] job id, ARGV[7] lock token.
 * Returns {step, arms, wakes}: step is {'end'} | {'stale'} | {'head', ...} as START.
 */
export const RETIRE_LUA = routeScript(`
${LOCK_FENCE('KEYS[10]', 'ARGV[7]')}
local job = ARGV[6]
local st = redis.call('HGET', R.drains, job)
if not st then return reply({'end'}) end
local kind = string.sub(st, 1, 1)
if kind == 'l' then
  local lane = string.sub(st, 2)
  local sk = G.state .. lane
  if redis.call('HGET', sk, 'job') == job then
    return reply({'head', unpack(head_of(lane, redis.call('HGET', sk, 'gen'), false))})
  end
elseif kind == 'i' then
  redis.call('LREM', R.idle, 0, string.sub(st, 2) .. '|' .. job)
elseif kind == 'x' then
  -- Its dispatcher was taken for gone while it waited: it counts again from here.
  redis.call('HINCRBY', R.drain, 'armed', 1)
  redis.call('HSET', R.drains, job, 'f')
end
-- Work that came due while it waited (a backing-off lane) is claimed rather than left.
local h = claim_next(R, job)
if h then return reply({'head', unpack(h)}) end
return reply(end_job(R, job))
`);

/**
 * The reconciler found a job gone (never added, deleted by hand, failed for good):
 * what it held goes back to its route, if its entry still reads `ARGV[7]`.
 * ARGV[6] job id, ARGV[7] the entry as read. Returns {{'dropped'|'changed'}, arms, wakes}.
 */
export const DROP_JOB_LUA = routeScript(`
local job = ARGV[6]
local st = redis.call('HGET', R.drains, job)
if st ~= ARGV[7] then return reply({'changed'}) end
local kind = string.sub(st, 1, 1)
if kind == 'a' then
  redis.call('HINCRBY', R.drain, 'pending', -1)
elseif kind == 'i' then
  redis.call('LREM', R.idle, 0, string.sub(st, 2) .. '|' .. job)
elseif kind == 'l' then
  local lane = string.sub(st, 2)
  if redis.call('HGET', G.state .. lane, 'job') == job then schedule(R, lane) end
end
if kind ~= 'x' then redis.call('HINCRBY', R.drain, 'armed', -1) end
redis.call('HDEL', R.drains, job)
arm(R)
return reply({'dropped'})
`);

/**
 * The reconciler's check of one lane of the route's lane set: a non-empty lane that is
 * neither listed (ready, delayed) nor held by a live job's entry is scheduled; an empty
 * one is released. Lanes left by the engine before drain jobs (a generation, no owner,
 * not listed) are taken over the same way.
 * KEYS[10] lane, [11] lane state. ARGV[6] lane id.
 * Returns {{'ok'|'scheduled'|'released'}, arms, wakes}.
 */
export const REPAIR_LANE_LUA = routeScript(`
local lane = ARGV[6]
if redis.call('LLEN', KEYS[10]) == 0 then
  redis.call('DEL', KEYS[11])
  redis.call('SREM', R.lanes, lane)
  redis.call('LREM', R.ready, 0, lane)
  redis.call('ZREM', R.delayed, lane)
  return reply({'released'})
end
local s = redis.call('HMGET', KEYS[11], 'job', 'q')
if s[1] then
  if redis.call('HGET', R.drains, s[1]) == 'l' .. lane then return reply({'ok'}) end
elseif s[2] == 'r' or s[2] == 'd' then
  return reply({'ok'})
end
redis.call('SADD', R.lanes, lane)
schedule(R, lane)
return reply({'scheduled'})
`);

/**
 * The reconciler's last step for a route: arm jobs for waiting lanes none will take,
 * and make sure a wake job is due for the earliest backing-off lane.
 * Returns {{'ok'}, arms, wakes}.
 */
export const ENSURE_DRAINING_LUA = routeScript(`
arm(R)
check_wake(R)
return reply({'ok'})
`);

/**
 * Moves up to ARGV[8] deliveries of a lane to dead letters with reason ARGV[7] (a
 * route removed by a reload), taking the lane from whoever holds or lists it first.
 * KEYS[10] lane, [11] lane state, [12] the bot's stats, [13] dead index, [14] dead by
 * route, [15] dead by bot. ARGV[6] lane id, [7] reason, [8] at most, [9] dead-letter
 * TTL (ms), [10] dead-letter key prefix.
 * Returns {{killed, 'done'|'more'}, arms, wakes}.
 */
export const KILL_LANE_LUA = routeScript(`
local lane, max = ARGV[6], tonumber(ARGV[8])
${expectTypeLua('kill')}
local err = expect(KEYS[13], 'zset') or expect(KEYS[14], 'zset') or expect(KEYS[15], 'zset')
  or expect(KEYS[12], 'hash')
if err then return err end
local s = redis.call('HMGET', KEYS[11], 'q', 'attempts', 'last_status', 'last_body', 'last_error')
if s[1] == 'r' then redis.call('LREM', R.ready, 0, lane) end
if s[1] == 'd' then redis.call('ZREM', R.delayed, lane) end
-- Whoever held the lane is stale from here on.
redis.call('HSET', KEYS[11], 'gen', redis.call('INCR', G.seq))
redis.call('HDEL', KEYS[11], 'job', 'q')
local killed = 0
while killed < max do
  local entry = redis.call('LINDEX', KEYS[10], 0)
  if not entry then break end
  local id = string.match(entry, '^{"d":"([^"]+)"')
  -- A key of another type where the dead letter goes: stop before popping the entry.
  if id then
    err = expect(ARGV[10] .. id, 'hash')
    if err then break end
    local key = ARGV[10] .. id
    local fields = {'entry', entry, 'reason', ARGV[7], 'dead_at', G.now, 'attempts', 0}
    if killed == 0 then
      fields[8] = s[2] or 0
      if s[3] then fields[#fields + 1] = 'last_status'; fields[#fields + 1] = s[3] end
      if s[4] and s[4] ~= '' then fields[#fields + 1] = 'last_body'; fields[#fields + 1] = s[4] end
      if s[5] and s[5] ~= '' then fields[#fields + 1] = 'last_error'; fields[#fields + 1] = s[5] end
    end
    redis.call('DEL', key)
    redis.call('HSET', key, unpack(fields))
    redis.call('PEXPIRE', key, ARGV[9])
    redis.call('ZADD', KEYS[13], G.now, id)
    redis.call('ZADD', KEYS[14], G.now, id)
    redis.call('ZADD', KEYS[15], G.now, id)
  end
  redis.call('LPOP', KEYS[10])
  if killed == 0 then
    redis.call('HDEL', KEYS[11], 'attempts', 'c5xx', 'last_status', 'last_body', 'last_error', 'next_at')
  end
  killed = killed + 1
end
if killed > 0 then
  redis.call('HINCRBY', R.stats, 'queued', -killed)
  redis.call('HINCRBY', R.stats, 'dead', killed)
  redis.call('HINCRBY', KEYS[12], 'queued', -killed)
end
if err then return err end
if redis.call('LLEN', KEYS[10]) == 0 then
  redis.call('DEL', KEYS[11])
  redis.call('SREM', R.lanes, lane)
  return reply({killed, 'done'})
end
return reply({killed, 'more'})
`);

/**
 * A dispatcher announces itself: live until Redis's clock passes now + ARGV[2] ms, and
 * with ARGV[3..] slots (`concurrency`) for the routes whose drain state hashes are
 * KEYS[2..]. Dispatchers silent for an hour are forgotten.
 * KEYS[1] dispatchers. ARGV[1] dispatcher id.
 */
export const HEARTBEAT_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - 3600000)
for i = 2, #KEYS do
  redis.call('HSET', KEYS[i], 'slots', ARGV[i + 1])
end
return now
`;

/** Presence lasts this long after a heartbeat; hand-offs stop going to a silent dispatcher after it. */
export const PRESENCE_TTL_MS = DISPATCHER_PRESENCE_TTL_MS;
