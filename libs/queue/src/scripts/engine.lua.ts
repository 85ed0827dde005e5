import { ARMED_JOB_PREFIX, DEFAULT_ROUTE_SLOTS, WAKE_JOB_PREFIX } from '@relaygram/contracts';
import { scriptLayout } from './script-layout';

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
 * Scripts that touch a route take the same leading KEYS and ARGV (`ROUTE`). Some lane
 * keys are not declared in KEYS: a lane popped from a list. That is legal on one Redis,
 * and on a Redis Cluster only because every key of an install shares one hash tag
 * (`redis.prefix: "{relaygram}"`). Keep it that way.
 * (Hand-offs are published on a channel, which a cluster carries to every node.)
 */

/**
 * The leading KEYS and ARGV of every route script: the route's lane set, ready list,
 * delayed set, drain jobs, drain state, idle jobs, stats; the sequence and the
 * dispatchers. The lane key, lane-state key and inbox channel prefixes, now (ms, the
 * caller's clock, for backoff), the route's name.
 */
export const ROUTE = scriptLayout({
  keys: ['lanes', 'ready', 'delayed', 'drains', 'drain', 'idle', 'stats', 'seq', 'dispatchers'],
  args: ['lanePrefix', 'statePrefix', 'inboxPrefix', 'now', 'route'],
});

/** `G`, the engine's globals, as a script with its own KEYS builds it. */
export function engineGlobals(
  seq: string,
  dispatchers: string,
  argv: { lanePrefix: string; statePrefix: string; inboxPrefix: string; now: string },
): string {
  return `local G = {lane = ${argv.lanePrefix}, state = ${argv.statePrefix}, inbox = ${argv.inboxPrefix}, now = tonumber(${argv.now}),
  seq = ${seq}, dispatchers = ${dispatchers}, arms = {}, wakes = {}}`;
}

const { K, A } = ROUTE;

/** `G` and `R`, the route's table, for a script on one route. */
export const ROUTE_PRELUDE = `
${engineGlobals(K.seq, K.dispatchers, A)}
local R = {lanes = ${K.lanes}, ready = ${K.ready}, delayed = ${K.delayed}, drains = ${K.drains},
  drain = ${K.drain}, idle = ${K.idle}, stats = ${K.stats}, name = ${A.route}}
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

/**
 * The engine's functions for a script that builds its own `G` (and route tables), as
 * the enqueue script does: G = {lane, state, inbox, now, seq, dispatchers, arms, wakes}.
 */
export const ENGINE_LUA = ENGINE_LIB;

/** The prelude and functions for a script on one route. */
export function routeScript(body: string): string {
  return `${ROUTE_PRELUDE}${ENGINE_LIB}${body}`;
}

/** Stops a script with {'stale'} unless the caller still holds its job's BullMQ lock. */
export function lockFence(lockKey: string, token: string): string {
  return `
if redis.call('GET', ${lockKey}) ~= ${token} then return reply({'stale'}) end
`;
}

/** The fields of a lane's state that describe its head's attempts, cleared when the head goes. */
export const ATTEMPT_FIELDS = `'attempts', 'c5xx', 'last_status', 'last_body', 'last_error', 'next_at'`;

/**
 * A job's entry in the route's drain jobs (`st`) ends its start-up (`a`: it no longer
 * counts as pending) or its wait (`i`: off the idle list); it opens the branch of a job
 * that holds a lane (`l`, with `lane` set), which the caller goes on and closes.
 * `indent` continues the lines at the caller's depth.
 */
export function leaveDrainEntryLua(indent = ''): string {
  return [
    `local kind = string.sub(st, 1, 1)`,
    `if kind == 'a' then`,
    `  redis.call('HINCRBY', R.drain, 'pending', -1)`,
    `elseif kind == 'i' then`,
    `  redis.call('LREM', R.idle, 0, string.sub(st, 2) .. '|' .. job)`,
    `elseif kind == 'l' then`,
    `  local lane = string.sub(st, 2)`,
  ].join(`\n${indent}`);
}

/**
 * Files a dead letter: its hash `key` (replacing one of an earlier death) from the Lua
 * table `fields`, kept `ttl` ms, and `id` in the three dead-letter indexes at `at`.
 * `indent` continues the lines at the caller's depth.
 */
export function fileDeadLetterLua(
  d: {
    key: string;
    fields: string;
    ttl: string;
    indexes: readonly string[];
    id: string;
    at: string;
  },
  indent = '',
): string {
  return [
    `redis.call('DEL', ${d.key})`,
    `redis.call('HSET', ${d.key}, unpack(${d.fields}))`,
    `redis.call('PEXPIRE', ${d.key}, ${d.ttl})`,
    indexDeadLua('ZADD', d.indexes, d.id, d.at, indent),
  ].join(`\n${indent}`);
}

/** Adds `id` to (ZADD, at `at`) or removes it from (ZREM) the three dead-letter indexes. */
export function indexDeadLua(
  op: 'ZADD' | 'ZREM',
  indexes: readonly string[],
  id: string,
  at: string | undefined,
  indent = '',
): string {
  const member = op === 'ZADD' ? `${at}, ${id}` : id;
  return indexes.map((index) => `redis.call('${op}', ${index}, ${member})`).join(`\n${indent}`);
}
