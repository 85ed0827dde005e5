import { expectTypeLua } from './lua-checks';
import { ATTEMPT_FIELDS, fileDeadLetterLua, ROUTE, routeScript } from './engine.lua';
import { scriptLayout, text } from './script-layout';

/**
 * KEYS: the lane and its state, the bot's stats, the dead index, dead by route and by
 * bot. ARGV: lane id, reason, at most this many deliveries, dead-letter TTL (ms),
 * dead-letter key prefix.
 */
export const KILL_LANE = scriptLayout({
  after: ROUTE,
  keys: ['lane', 'laneState', 'botStats', 'deadIndex', 'deadByRoute', 'deadByBot'],
  args: ['laneId', 'reason', 'atMost', 'deadTtlMs', 'deadPrefix'],
});

const { K, A } = KILL_LANE;

const fileDeadLetter = fileDeadLetterLua(
  {
    key: 'key',
    fields: 'fields',
    ttl: A.deadTtlMs,
    indexes: [K.deadIndex, K.deadByRoute, K.deadByBot],
    id: 'id',
    at: 'G.now',
  },
  '    ',
);

/**
 * Moves up to `atMost` deliveries of a lane to dead letters with `reason` (a route
 * removed by a reload), taking the lane from whoever holds or lists it first.
 * Returns {{killed, 'done'|'more'}, arms, wakes}.
 */
export const KILL_LANE_LUA = routeScript(`
local lane, max = ${A.laneId}, tonumber(${A.atMost})
${expectTypeLua('kill')}
local err = expect(${K.deadIndex}, 'zset') or expect(${K.deadByRoute}, 'zset') or expect(${K.deadByBot}, 'zset')
  or expect(${K.botStats}, 'hash')
if err then return err end
local s = redis.call('HMGET', ${K.laneState}, 'q', 'attempts', 'last_status', 'last_body', 'last_error')
if s[1] == 'r' then redis.call('LREM', R.ready, 0, lane) end
if s[1] == 'd' then redis.call('ZREM', R.delayed, lane) end
-- Whoever held the lane is stale from here on.
redis.call('HSET', ${K.laneState}, 'gen', redis.call('INCR', G.seq))
redis.call('HDEL', ${K.laneState}, 'job', 'q')
local killed = 0
while killed < max do
  local entry = redis.call('LINDEX', ${K.lane}, 0)
  if not entry then break end
  local id = string.match(entry, '^{"d":"([^"]+)"')
  -- A key of another type where the dead letter goes: stop before popping the entry.
  if id then
    err = expect(${A.deadPrefix} .. id, 'hash')
    if err then break end
    local key = ${A.deadPrefix} .. id
    local fields = {'entry', entry, 'reason', ${A.reason}, 'dead_at', G.now, 'attempts', 0}
    if killed == 0 then
      fields[8] = s[2] or 0
      if s[3] then fields[#fields + 1] = 'last_status'; fields[#fields + 1] = s[3] end
      if s[4] and s[4] ~= '' then fields[#fields + 1] = 'last_body'; fields[#fields + 1] = s[4] end
      if s[5] and s[5] ~= '' then fields[#fields + 1] = 'last_error'; fields[#fields + 1] = s[5] end
    end
    ${fileDeadLetter}
  end
  redis.call('LPOP', ${K.lane})
  if killed == 0 then
    redis.call('HDEL', ${K.laneState}, ${ATTEMPT_FIELDS})
  end
  killed = killed + 1
end
if killed > 0 then
  redis.call('HINCRBY', R.stats, 'queued', -killed)
  redis.call('HINCRBY', R.stats, 'dead', killed)
  redis.call('HINCRBY', ${K.botStats}, 'queued', -killed)
end
if err then return err end
if redis.call('LLEN', ${K.lane}) == 0 then
  redis.call('DEL', ${K.laneState})
  redis.call('SREM', R.lanes, lane)
  return reply({killed, 'done'})
end
return reply({killed, 'more'})
`);

/** {{killed, 'done'|'more'}, arms, wakes}: the arms and wakes are always empty. */
export function parseKillLaneReply(reply: unknown): { killed: number; done: boolean } {
  const [killed, state] = (reply as unknown[])[0] as unknown[];
  return { killed: Number(killed), done: text(state) === 'done' };
}
