import { lockFence, ROUTE, routeScript } from './engine.lua';
import { scriptLayout } from './script-layout';

/** KEYS: the job's lock. ARGV: job id, lock token. */
export const RETIRE = scriptLayout({
  after: ROUTE,
  keys: ['lockKey'],
  args: ['jobId', 'lockToken'],
});

const { K, A } = RETIRE;

/**
 * A waiting job's wait is over (or its dispatcher is stopping): it ends, unless a lane
 * was handed to it meanwhile, whose head is then returned (already begun by the
 * hand-off, whether or not the message arrived), or a lane is due or ready, which it
 * claims.
 * Returns {step, arms, wakes}: step is {'end'} | {'stale'} | {'head', ...} as START.
 */
export const RETIRE_LUA = routeScript(`
${lockFence(K.lockKey, A.lockToken)}
local job = ${A.jobId}
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
