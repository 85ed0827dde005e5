import { parseArms, type ArmedJob } from '../lanes/drain-script-io';
import { DELIVERY_LOG_LUA, UPDATE_LOG_FIELDS } from './delivery-log.lua';
import { ENGINE_LUA, engineGlobals } from './engine.lua';
import { expectTypeLua } from './lua-checks';
import { scriptLayout, text, type ScriptArg } from './script-layout';

/**
 * KEYS: dedup bitmap of the update's block, sequence, dispatchers, set of routes, the
 * bot's stats, the bot's update log; then `DELIVERY_KEYS` per delivery. ARGV: the lane
 * key, lane-state key and inbox channel prefixes, now (ms), the update_id's bit in its
 * block, dedup TTL (s), the update log's cap (0: off) and max age (ms), the update_id,
 * the deliveries as the log keeps them; then `DELIVERY_ARGS` per delivery (`pushDelivery`).
 */
export const ENQUEUE = scriptLayout({
  keys: ['dedup', 'seq', 'dispatchers', 'routes', 'botStats', 'updateLog'],
  args: [
    'lanePrefix',
    'statePrefix',
    'inboxPrefix',
    'now',
    'offset',
    'dedupTtl',
    'logCap',
    'logMaxAge',
    'updateId',
    'logDeliveries',
  ],
});

/**
 * A delivery's KEYS: lane, lane state, and the route's lane set (its pull lanes for a
 * pull route), ready list, delayed set, drain jobs, drain state, idle jobs, stats.
 * Its ARGV: lane id, route name, encoded entry, and for a pull route the channel on
 * which its waiting getUpdates calls are told ('' for a push route).
 */
const DELIVERY_KEYS = [
  'lane',
  'laneState',
  'lanes',
  'ready',
  'delayed',
  'drains',
  'drain',
  'idle',
  'stats',
] as const;
const DELIVERY_ARGS = ['laneId', 'route', 'entry', 'pullChannel'] as const;

export type EnqueueDelivery = { readonly [P in (typeof DELIVERY_KEYS)[number]]: string } & {
  readonly [P in (typeof DELIVERY_ARGS)[number]]: ScriptArg;
};

/** A delivery's KEYS and ARGV, after those of the deliveries before it. */
export function pushDelivery(
  tail: { keys: string[]; args: ScriptArg[] },
  d: EnqueueDelivery,
): void {
  for (const name of DELIVERY_KEYS) tail.keys.push(d[name]);
  for (const name of DELIVERY_ARGS) tail.args.push(d[name]);
}

/** `KEYS[k + i]` of a delivery's key, `ARGV[a + i]` of its argument: `k`, `a` its first. */
function deliveryPlaces<N extends string>(
  array: string,
  first: string,
  names: readonly N[],
): Record<N, string> {
  const places = {} as Record<N, string>;
  names.forEach((name, i) => (places[name] = `${array}[${first}${i ? ` + ${i}` : ''}]`));
  return places;
}

const { K, A } = ENQUEUE;
const DK = deliveryPlaces('KEYS', 'k', DELIVERY_KEYS);
const DA = deliveryPlaces('ARGV', 'a', DELIVERY_ARGS);

export type EnqueueReply =
  { duplicate: true } | { duplicate: false; arms: ArmedJob[]; failures: string[] };

/** {0} for a duplicate, else {1, arms, failures}. */
export function parseEnqueueReply(reply: unknown): EnqueueReply {
  const parts = reply as unknown[];
  if (Number(parts[0]) === 0) return { duplicate: true };
  return {
    duplicate: false,
    arms: parseArms(parts[1]),
    failures: ((parts[2] ?? []) as unknown[]).map(text),
  };
}

/**
 * Dedup and enqueue one update, atomically.
 *
 * A pull route's lane is never scheduled: no drain job sends it; its client takes the
 * deliveries with getUpdates.
 *
 * Returns {0} for a duplicate, else {1, arms, failures}: arms are route, job id pairs
 * of drain jobs the caller must add; failures, the errors met while scheduling lanes.
 *
 * Lua scripts have no rollback: a command that fails half-way leaves the writes before
 * it in place. So every check the acceptance depends on (dedup bit, lanes, counters,
 * the route's lane set) comes before the first write, and once the update is marked
 * seen, nothing may abort the script: a lane whose scheduling fails (a key of the
 * wrong type, written by hand) is reported and stays in its route's lane set, where
 * the reconciler schedules it once the key is fixed. The update itself is accepted.
 * The update log's entry (queued, ignored or duplicate) is the last write, under pcall
 * (see DELIVERY_LOG_LUA): a broken log key never turns an update away.
 */
export const ENQUEUE_LUA = `
${engineGlobals(K.seq, K.dispatchers, A)}
${ENGINE_LUA}
${DELIVERY_LOG_LUA}
local function log_update(status, deliveries)
  log_write(${K.updateLog}, ${A.logCap}, ${A.logMaxAge}, {'${UPDATE_LOG_FIELDS.updateId}', ${A.updateId},
    '${UPDATE_LOG_FIELDS.status}', status, '${UPDATE_LOG_FIELDS.deliveries}', deliveries})
end
local offset = tonumber(${A.offset})
local ttl = tonumber(${A.dedupTtl})
local n = (#KEYS - ${ENQUEUE.keyCount}) / ${DELIVERY_KEYS.length}
if offset == nil or ttl == nil or n < 0 or n ~= math.floor(n) or #ARGV ~= ${ENQUEUE.argCount} + n * ${DELIVERY_ARGS.length} then
  return redis.error_reply('ERR relaygram enqueue: malformed arguments')
end

-- Checks. GETBIT and LLEN fail on a key of another type before anything is written.
if redis.call('GETBIT', ${K.dedup}, offset) == 1 then
  log_update('duplicate', '')
  return {0}
end
${expectTypeLua('enqueue')}
local err = expect(${K.botStats}, 'hash')
if err then return err end
local idle = {}
local new_lanes = false
for i = 1, n do
  local k = ${ENQUEUE.keyCount + 1} + (i - 1) * ${DELIVERY_KEYS.length}
  idle[i] = redis.call('LLEN', ${DK.lane}) == 0
  err = expect(${DK.stats}, 'hash')
  if not err and idle[i] then
    err = expect(${DK.lanes}, 'set')
    new_lanes = true
  end
  if err then return err end
end
if new_lanes then
  err = expect(${K.routes}, 'set')
  if err then return err end
end

-- Checks done; writes from here on.
redis.call('SETBIT', ${K.dedup}, offset, 1)
-- The block lives a full window after its last write, so every mark in it lives at least that long.
redis.call('EXPIRE', ${K.dedup}, ttl)
if n > 0 then
  redis.call('HINCRBY', ${K.botStats}, 'queued', n)
end
local failures = {}
for i = 1, n do
  local k = ${ENQUEUE.keyCount + 1} + (i - 1) * ${DELIVERY_KEYS.length}
  local a = ${ENQUEUE.argCount + 1} + (i - 1) * ${DELIVERY_ARGS.length}
  local lane, route, pull = ${DA.laneId}, ${DA.route}, ${DA.pullChannel}
  redis.call('RPUSH', ${DK.lane}, ${DA.entry})
  redis.call('HINCRBY', ${DK.stats}, 'queued', 1)
  if pull ~= '' then
    if idle[i] then redis.call('SADD', ${DK.lanes}, lane) end
    redis.call('PUBLISH', pull, lane)
  elseif idle[i] then
    redis.call('SADD', ${DK.lanes}, lane)
    redis.call('SADD', ${K.routes}, route)
    local r = {lanes = ${DK.lanes}, ready = ${DK.ready}, delayed = ${DK.delayed},
      drains = ${DK.drains}, drain = ${DK.drain}, idle = ${DK.idle}, stats = ${DK.stats}, name = route}
    local ok, failure = pcall(schedule, r, lane, true)
    if not ok then
      failures[#failures + 1] = lane .. ': ' .. tostring(type(failure) == 'table' and failure.err or failure)
    end
  end
end
log_update(n > 0 and 'queued' or 'ignored', ${A.logDeliveries})
return {1, G.arms, failures}
`;
