import { leaveDrainEntryLua, ROUTE, routeScript } from './engine.lua';
import { parseJobsToAdd, parseOutcome, type DrainJobsToAdd } from '../lanes/drain-script-io';
import { scriptLayout } from './script-layout';

/** ARGV: job id, its drain-jobs entry as the reconciler read it. */
export const DROP_JOB = scriptLayout({ after: ROUTE, keys: [], args: ['jobId', 'seen'] });

/**
 * The reconciler found a job gone (never added, deleted by hand, failed for good):
 * what it held goes back to its route, if its entry still reads `seen`.
 * Returns {{'dropped'|'changed'}, arms, wakes}.
 */
export const DROP_JOB_LUA = routeScript(`
local job = ${DROP_JOB.A.jobId}
local st = redis.call('HGET', R.drains, job)
if st ~= ${DROP_JOB.A.seen} then return reply({'changed'}) end
${leaveDrainEntryLua()}
  if redis.call('HGET', G.state .. lane, 'job') == job then schedule(R, lane) end
end
if kind ~= 'x' then redis.call('HINCRBY', R.drain, 'armed', -1) end
redis.call('HDEL', R.drains, job)
arm(R)
return reply({'dropped'})
`);

export function parseDropJobReply(reply: unknown): { dropped: boolean; jobs: DrainJobsToAdd } {
  return { dropped: parseOutcome(reply) === 'dropped', jobs: parseJobsToAdd(reply as unknown[]) };
}

/** KEYS: the lane and its state. ARGV: lane id. */
export const REPAIR_LANE = scriptLayout({
  after: ROUTE,
  keys: ['lane', 'laneState'],
  args: ['laneId'],
});

/**
 * The reconciler's check of one lane of the route's lane set: a non-empty lane that is
 * neither listed (ready, delayed) nor held by a live job's entry is scheduled; an empty
 * one is released. Lanes left by the engine before drain jobs (a generation, no owner,
 * not listed) are taken over the same way.
 * Returns {{'ok'|'scheduled'|'released'}, arms, wakes}.
 */
export const REPAIR_LANE_LUA = routeScript(`
local lane = ${REPAIR_LANE.A.laneId}
if redis.call('LLEN', ${REPAIR_LANE.K.lane}) == 0 then
  redis.call('DEL', ${REPAIR_LANE.K.laneState})
  redis.call('SREM', R.lanes, lane)
  redis.call('LREM', R.ready, 0, lane)
  redis.call('ZREM', R.delayed, lane)
  return reply({'released'})
end
local s = redis.call('HMGET', ${REPAIR_LANE.K.laneState}, 'job', 'q')
if s[1] then
  if redis.call('HGET', R.drains, s[1]) == 'l' .. lane then return reply({'ok'}) end
elseif s[2] == 'r' or s[2] == 'd' then
  return reply({'ok'})
end
redis.call('SADD', R.lanes, lane)
schedule(R, lane)
return reply({'scheduled'})
`);

export function parseRepairLaneReply(reply: unknown): {
  outcome: 'ok' | 'scheduled' | 'released';
  jobs: DrainJobsToAdd;
} {
  return {
    outcome: parseOutcome(reply) as 'ok' | 'scheduled' | 'released',
    jobs: parseJobsToAdd(reply as unknown[]),
  };
}

/** The route's KEYS and ARGV only. */
export const ENSURE_DRAINING = scriptLayout({ after: ROUTE, keys: [], args: [] });

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

export function parseEnsureDrainingReply(reply: unknown): DrainJobsToAdd {
  return parseJobsToAdd(reply as unknown[]);
}
