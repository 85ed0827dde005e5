import { parseJobsToAdd, parseOutcome, type DrainJobsToAdd } from '../lanes/drain-script-io';
import { ROUTE, routeScript } from './engine.lua';
import { expectTypeLua } from './lua-checks';
import { scriptLayout } from './script-layout';

/**
 * KEYS: the send's record, its lane and lane state, the set of routes, the bot's stats.
 * ARGV: lane id, encoded entry, record TTL (ms), the record's fields (client, method,
 * chat, created at).
 */
export const OUTBOX_ENQUEUE = scriptLayout({
  after: ROUTE,
  keys: ['record', 'lane', 'laneState', 'routes', 'botStats'],
  args: ['laneId', 'entry', 'ttlMs', 'client', 'method', 'chat', 'createdAt'],
});

const { K, A } = OUTBOX_ENQUEUE;
const R = ROUTE.K;

/**
 * An outbox send, made durable in one step: its record (`queued`) and its entry at the
 * tail of its chat's lane, scheduled like a lane of a new update when it was idle. Every
 * key is checked before the first write (no rollback in Lua), and an id already taken
 * changes nothing. Returns {{'queued'} | {'exists'}, arms, wakes}.
 */
export const OUTBOX_ENQUEUE_LUA = routeScript(`
if redis.call('EXISTS', ${K.record}) == 1 then
  return reply({'exists'})
end
${expectTypeLua('outbox')}
local err = expect(${K.lane}, 'list') or expect(${K.laneState}, 'hash') or expect(${R.lanes}, 'set')
  or expect(${R.ready}, 'list') or expect(${R.delayed}, 'zset') or expect(${R.drains}, 'hash')
  or expect(${R.drain}, 'hash') or expect(${R.idle}, 'list') or expect(${R.stats}, 'hash')
  or expect(${R.seq}, 'string') or expect(${R.dispatchers}, 'zset') or expect(${K.routes}, 'set')
  or expect(${K.botStats}, 'hash')
if err then return err end

redis.call('HSET', ${K.record}, 'status', 'queued', 'client', ${A.client}, 'method', ${A.method},
  'chat', ${A.chat}, 'created', ${A.createdAt}, 'updated', ${A.createdAt}, 'attempts', 0)
redis.call('PEXPIRE', ${K.record}, ${A.ttlMs})
local idle = redis.call('LLEN', ${K.lane}) == 0
redis.call('RPUSH', ${K.lane}, ${A.entry})
redis.call('HINCRBY', ${R.stats}, 'queued', 1)
redis.call('HINCRBY', ${K.botStats}, 'queued', 1)
if idle then
  redis.call('SADD', ${R.lanes}, ${A.laneId})
  redis.call('SADD', ${K.routes}, ${ROUTE.A.route})
  schedule(R, ${A.laneId}, true)
end
return reply({'queued'})
`);

/** Undefined when the id was taken already; else the drain jobs to add. */
export function parseOutboxEnqueueReply(reply: unknown): DrainJobsToAdd | undefined {
  return parseOutcome(reply) === 'exists' ? undefined : parseJobsToAdd(reply as unknown[]);
}
