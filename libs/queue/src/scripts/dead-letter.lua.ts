import { indexDeadLua, ROUTE, routeScript } from './engine.lua';
import { expectTypeLua } from './lua-checks';
import { parseJobsToAdd, parseOutcome, type DrainJobsToAdd } from '../lanes/drain-script-io';
import { scriptLayout } from './script-layout';

/**
 * KEYS: the dead letter, the dead index, dead by route, dead by bot, the lane and its
 * state, the set of routes, the bot's stats. ARGV: delivery id, lane id, entry.
 */
export const REPLAY = scriptLayout({
  after: ROUTE,
  keys: [
    'deadLetter',
    'deadIndex',
    'deadByRoute',
    'deadByBot',
    'lane',
    'laneState',
    'routes',
    'botStats',
  ],
  args: ['deliveryId', 'laneId', 'entry'],
});

const { K, A } = REPLAY;
const R = ROUTE.K;

/**
 * Re-send a dead letter: append it to the tail of its lane and drop the dead letter, in
 * one step, so a re-send is neither lost nor doubled when two operators press at once.
 * A lane that was idle is scheduled like a lane of a new update.
 * Returns {{'missing'} | {'queued'}, arms, wakes}.
 */
export const REPLAY_LUA = routeScript(`
if redis.call('EXISTS', ${K.deadLetter}) == 0 then
  return reply({'missing'})
end
${expectTypeLua('replay')}
local err = expect(${K.lane}, 'list') or expect(${K.laneState}, 'hash') or expect(${R.lanes}, 'set')
  or expect(${R.ready}, 'list') or expect(${R.delayed}, 'zset') or expect(${R.drains}, 'hash')
  or expect(${R.drain}, 'hash') or expect(${R.idle}, 'list') or expect(${R.stats}, 'hash')
  or expect(${R.seq}, 'string') or expect(${R.dispatchers}, 'zset') or expect(${K.routes}, 'set')
  or expect(${K.botStats}, 'hash')
if err then return err end

local idle = redis.call('LLEN', ${K.lane}) == 0
redis.call('RPUSH', ${K.lane}, ${A.entry})
redis.call('HINCRBY', ${R.stats}, 'queued', 1)
redis.call('HINCRBY', ${K.botStats}, 'queued', 1)
redis.call('DEL', ${K.deadLetter})
${indexDeadLua('ZREM', [K.deadIndex, K.deadByRoute, K.deadByBot], A.deliveryId, undefined)}
if idle then
  redis.call('SADD', ${R.lanes}, ${A.laneId})
  redis.call('SADD', ${K.routes}, ${ROUTE.A.route})
  schedule(R, ${A.laneId}, true)
end
return reply({'queued'})
`);

/** Undefined when the dead letter was gone; else the drain jobs to add. */
export function parseReplayReply(reply: unknown): DrainJobsToAdd | undefined {
  return parseOutcome(reply) === 'missing' ? undefined : parseJobsToAdd(reply as unknown[]);
}

/** KEYS: the dead letter, the dead index, dead by route, dead by bot. ARGV: delivery id. */
export const DELETE_DEAD = scriptLayout({
  keys: ['deadLetter', 'deadIndex', 'deadByRoute', 'deadByBot'],
  args: ['deliveryId'],
});

/** Delete a dead letter and its index entries. Returns 1 when it existed. */
export const DELETE_DEAD_LUA = `
local existed = redis.call('DEL', ${DELETE_DEAD.K.deadLetter})
${indexDeadLua('ZREM', [DELETE_DEAD.K.deadIndex, DELETE_DEAD.K.deadByRoute, DELETE_DEAD.K.deadByBot], DELETE_DEAD.A.deliveryId, undefined)}
return existed
`;

export function parseDeleteDeadReply(reply: unknown): boolean {
  return Number(reply) === 1;
}
