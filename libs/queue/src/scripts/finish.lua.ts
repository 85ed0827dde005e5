import { ATTEMPT_LOG_FIELDS as F, DELIVERY_LOG_LUA } from './delivery-log.lua';
import { expectTypeLua } from './lua-checks';
import { ATTEMPT_FIELDS, fileDeadLetterLua, lockFence, ROUTE, routeScript } from './engine.lua';
import { scriptLayout } from './script-layout';

/**
 * KEYS: the lane and its state, the job's lock, the bot's stats, the dead letter, the
 * dead index, dead by route and by bot, the own lane and its state (`detach`), the
 * route's attempt log.
 * ARGV: job id, lock token, lane id, generation, head prefix, outcome: 'delivered' |
 * 'dead' | 'retry' (the head backs off in its lane) | 'detach' (it backs off in a lane of
 * its own: a spread lane's retry) | 'none' (no attempt was made: the lane is handed back
 * as it is); then: 'continue' (the next head of this lane) | 'yield' (another lane if
 * one waits) | 'stop' (hand the lane on and end the job); dispatcher to wait on ('' to
 * end when nothing is ready), dead-letter TTL (ms), delivery id, own lane id,
 * consecutive 5xx, last status, last error, next attempt at (ms), last body; the attempt
 * log's cap (0: off) and max age (ms), and the attempt as it logs it (update_id, bot,
 * attempt number, status or '', error kind or '', duration, the answer's first bytes);
 * after them, for 'dead', field/value pairs of the dead letter.
 */
export const FINISH = scriptLayout({
  after: ROUTE,
  keys: [
    'lane',
    'laneState',
    'lockKey',
    'botStats',
    'deadLetter',
    'deadIndex',
    'deadByRoute',
    'deadByBot',
    'ownLane',
    'ownLaneState',
    'attemptLog',
  ],
  args: [
    'jobId',
    'lockToken',
    'laneId',
    'gen',
    'headPrefix',
    'outcome',
    'then',
    'dispatcher',
    'deadTtlMs',
    'deliveryId',
    'ownLaneId',
    'consecutive5xx',
    'lastStatus',
    'lastError',
    'nextAttemptAt',
    'lastBody',
    'logCap',
    'logMaxAge',
    'updateId',
    'bot',
    'attempt',
    'logStatus',
    'logError',
    'logMs',
    'logBody',
  ],
});

const { K, A } = FINISH;

const fileDeadLetter = fileDeadLetterLua(
  {
    key: K.deadLetter,
    fields: 'fields',
    ttl: A.deadTtlMs,
    indexes: [K.deadIndex, K.deadByRoute, K.deadByBot],
    id: A.deliveryId,
    at: 'G.now',
  },
  '    ',
);

/**
 * A job finished an attempt on the head of the lane it holds, and goes on.
 * Returns {step, arms, wakes} as START.
 *
 * Crash analysis: Redis runs the script whole or not at all. Every check comes before
 * the first write; the counters are written before the head is popped, and the dead
 * letter's keys are type-checked first, so no failure can pop a head it did not file.
 * The attempt log's entry is written after the head's outcome, under pcall (see
 * DELIVERY_LOG_LUA), so a broken log key can neither abort the script half-way nor hold
 * up a lane; a stale job (fence lost) logs nothing, as it changes nothing.
 */
export const FINISH_LUA = routeScript(`
${DELIVERY_LOG_LUA}
${lockFence(K.lockKey, A.lockToken)}
local job, lane, gen, prefix = ${A.jobId}, ${A.laneId}, ${A.gen}, ${A.headPrefix}
local outcome, after, dispatcher = ${A.outcome}, ${A.then}, ${A.dispatcher}
local owner = redis.call('HMGET', ${K.laneState}, 'gen', 'job')
if owner[1] ~= gen or owner[2] ~= job then return reply({'stale'}) end
local head = redis.call('LINDEX', ${K.lane}, 0)
if not head or string.sub(head, 1, #prefix) ~= prefix then return reply({'stale'}) end
if (#ARGV - ${FINISH.argCount}) % 2 ~= 0 then
  return redis.error_reply('ERR relaygram finish: malformed dead-letter fields')
end
${expectTypeLua('finish')}
if outcome == 'dead' then
  local err = expect(${K.deadLetter}, 'hash') or expect(${K.deadIndex}, 'zset') or expect(${K.deadByRoute}, 'zset')
    or expect(${K.deadByBot}, 'zset')
  if err then return err end
elseif outcome == 'detach' then
  local err = expect(${K.ownLane}, 'list') or expect(${K.ownLaneState}, 'hash')
  if err then return err end
end

local held = true
if outcome == 'delivered' or outcome == 'dead' then
  redis.call('HINCRBY', R.stats, 'queued', -1)
  redis.call('HINCRBY', ${K.botStats}, 'queued', -1)
  if outcome == 'dead' then
    local fields = {'entry', head}
    for i = ${FINISH.argCount + 1}, #ARGV do fields[#fields + 1] = ARGV[i] end
    -- A re-sent delivery that dies again must not keep fields of its earlier death.
    ${fileDeadLetter}
    redis.call('HINCRBY', R.stats, 'dead', 1)
  else
    redis.call('HINCRBY', R.stats, 'delivered', 1)
  end
  redis.call('LPOP', ${K.lane})
  redis.call('HDEL', ${K.laneState}, ${ATTEMPT_FIELDS})
elseif outcome == 'retry' then
  redis.call('HSET', ${K.laneState}, 'c5xx', ${A.consecutive5xx}, 'last_status', ${A.lastStatus}, 'last_error', ${A.lastError},
    'next_at', ${A.nextAttemptAt}, 'last_body', ${A.lastBody})
  redis.call('HSET', R.stats, 'last_error', ${A.lastError}, 'last_status', ${A.lastStatus}, 'last_error_at', G.now)
  schedule(R, lane)
  held = false
elseif outcome == 'detach' then
  local attempts = redis.call('HGET', ${K.laneState}, 'attempts') or '0'
  redis.call('HSET', R.stats, 'last_error', ${A.lastError}, 'last_status', ${A.lastStatus}, 'last_error_at', G.now)
  redis.call('LPOP', ${K.lane})
  redis.call('HDEL', ${K.laneState}, ${ATTEMPT_FIELDS})
  redis.call('RPUSH', ${K.ownLane}, head)
  if redis.call('EXISTS', ${K.ownLaneState}) == 0 then
    redis.call('HSET', ${K.ownLaneState}, 'attempts', attempts, 'c5xx', ${A.consecutive5xx}, 'last_status', ${A.lastStatus},
      'last_error', ${A.lastError}, 'next_at', ${A.nextAttemptAt}, 'last_body', ${A.lastBody})
    redis.call('SADD', R.lanes, ${A.ownLaneId})
    schedule(R, ${A.ownLaneId})
  end
end

if outcome ~= 'none' then
  local retried = outcome == 'retry' or outcome == 'detach'
  log_write(${K.attemptLog}, ${A.logCap}, ${A.logMaxAge}, {'${F.deliveryId}', ${A.deliveryId}, '${F.updateId}', ${A.updateId},
    '${F.bot}', ${A.bot}, '${F.attempt}', ${A.attempt}, '${F.outcome}', retried and 'retry' or outcome,
    '${F.status}', ${A.logStatus}, '${F.error}', ${A.logError}, '${F.durationMs}', ${A.logMs}, '${F.body}', ${A.logBody},
    '${F.nextAttemptAt}', retried and ${A.nextAttemptAt} or ''})
end

if held then
  if outcome ~= 'none' and redis.call('LLEN', ${K.lane}) == 0 then
    redis.call('DEL', ${K.laneState})
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
