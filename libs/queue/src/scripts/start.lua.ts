import { leaveDrainEntryLua, lockFence, ROUTE, routeScript } from './engine.lua';
import { scriptLayout } from './script-layout';

/**
 * A drain job starts (or BullMQ re-runs it after a crash). KEYS: the job's lock. ARGV:
 * job id, lock token, dispatcher to wait on ('' to end instead of waiting).
 * Replies as every drain step (`parseDrainResult`).
 */
export const START = scriptLayout({
  after: ROUTE,
  keys: ['lockKey'],
  args: ['jobId', 'lockToken', 'dispatcher'],
});

const { K, A } = START;

/**
 * Returns {step, arms, wakes}; step is {'stale'} | {'idle', earliest due ms?} | {'end'} |
 * {'head', lane, gen, entry, attempts, c5xx, last_status, last_body, last_error}.
 */
export const START_LUA = routeScript(`
${lockFence(K.lockKey, A.lockToken)}
local job, dispatcher = ${A.jobId}, ${A.dispatcher}
local st = redis.call('HGET', R.drains, job)
if not st or st == 'x' then
  -- A wake job, or one the reconciler dropped or un-counted: it counts from now on.
  redis.call('HINCRBY', R.drain, 'armed', 1)
  redis.call('HSET', R.drains, job, 'f')
else
  ${leaveDrainEntryLua('  ')}
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
