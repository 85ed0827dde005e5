import { expectTypeLua } from './lua-checks';
import { scriptLayout } from './script-layout';

/**
 * The broadcast scripts. A broadcast's keys are one hash (`meta`: status, call,
 * counters, times), the recipients' list, the claims (list index by when the claim
 * runs out), the tries of recipients sent more than once, and the failures' lists.
 * A claim is a lease: a recipient whose result never comes is claimed again when it
 * runs out, so only a send in flight when its process died can go out twice.
 */

/** Shared by the scripts that can end a broadcast: its keys (not the running set) kept `ttl` ms. */
const FINISH = `
local function keep_for(ttl)
  for i = 1, 6 do
    if redis.call('EXISTS', KEYS[i]) == 1 then redis.call('PEXPIRE', KEYS[i], ttl) end
  end
end
local function stop_running(now)
  local since = tonumber(redis.call('HGET', KEYS[1], 'run_since') or '')
  if since then
    redis.call('HINCRBY', KEYS[1], 'run_ms', math.max(0, now - since))
    redis.call('HDEL', KEYS[1], 'run_since')
  end
end
`;

export const BROADCAST_CREATE = scriptLayout({
  keys: ['meta', 'recipients'],
  args: ['client', 'createdAt', 'ttlMs', 'staleMs', 'upload'],
});

/**
 * A new broadcast, `loading` until its recipients are in. One already there is left as
 * it is and its status returned, unless it is a loading one whose upload went quiet
 * `staleMs` ago: that one starts afresh (its recipients dropped).
 */
export const BROADCAST_CREATE_LUA = (() => {
  const { K, A } = BROADCAST_CREATE;
  return `
local status = redis.call('HGET', ${K.meta}, 'status')
local now = tonumber(${A.createdAt})
if status == 'loading' and now - tonumber(redis.call('HGET', ${K.meta}, 'touched') or '0') >= tonumber(${A.staleMs}) then
  redis.call('DEL', ${K.meta}, ${K.recipients})
  status = nil
end
if status then return status end
if redis.call('EXISTS', ${K.meta}) == 1 then
  return redis.error_reply('WRONGTYPE relaygram broadcast: ' .. ${K.meta} .. ' is not a broadcast')
end
redis.call('HSET', ${K.meta}, 'status', 'loading', 'client', ${A.client}, 'created', now,
  'touched', now, 'upload', ${A.upload}, 'total', 0, 'next', 0, 'sent', 0, 'blocked', 0, 'failed', 0)
redis.call('PEXPIRE', ${K.meta}, ${A.ttlMs})
return 'created'
`;
})();

export const BROADCAST_APPEND = scriptLayout({
  keys: ['meta', 'recipients'],
  args: ['ttlMs', 'max', 'now', 'upload'],
});

/** A chunk of recipients (ARGV after the named ones). Returns the total, or an error when over max. */
export const BROADCAST_APPEND_LUA = (() => {
  const { K, A } = BROADCAST_APPEND;
  return `
${expectTypeLua('broadcast append')}
if redis.call('HGET', ${K.meta}, 'status') ~= 'loading' then
  return redis.error_reply('ERR relaygram broadcast: not loading')
end
if redis.call('HGET', ${K.meta}, 'upload') ~= ${A.upload} then
  return redis.error_reply('ERR relaygram broadcast: its upload was started afresh by another request')
end
local err = expect(${K.recipients}, 'list')
if err then return err end
local total = redis.call('LLEN', ${K.recipients}) + #ARGV - 4
if total > tonumber(${A.max}) then
  return redis.error_reply('ERR relaygram broadcast: more than ' .. ${A.max} .. ' recipients')
end
redis.call('RPUSH', ${K.recipients}, unpack(ARGV, 5))
redis.call('HSET', ${K.meta}, 'total', total, 'touched', ${A.now})
redis.call('PEXPIRE', ${K.meta}, ${A.ttlMs})
redis.call('PEXPIRE', ${K.recipients}, ${A.ttlMs})
return total
`;
})();

export const BROADCAST_START = scriptLayout({
  keys: ['meta', 'recipients', 'index', 'running'],
  args: ['now', 'member', 'id', 'method', 'params', 'upload'],
});

/** `loading` to `running`: the keys kept until it ends, listed for dispatchers. Returns the status. */
export const BROADCAST_START_LUA = (() => {
  const { K, A } = BROADCAST_START;
  return `
local status = redis.call('HGET', ${K.meta}, 'status')
if not status then return 'missing' end
if redis.call('HGET', ${K.meta}, 'upload') ~= ${A.upload} then return 'replaced' end
if status ~= 'loading' then return status end
redis.call('HDEL', ${K.meta}, 'touched')
redis.call('HSET', ${K.meta}, 'status', 'running', 'started', ${A.now}, 'run_since', ${A.now},
  'method', ${A.method}, 'params', ${A.params})
redis.call('PERSIST', ${K.meta})
redis.call('PERSIST', ${K.recipients})
redis.call('ZADD', ${K.index}, redis.call('HGET', ${K.meta}, 'created'), ${A.id})
redis.call('SADD', ${K.running}, ${A.member})
return 'running'
`;
})();

/** KEYS[1..7] of the scripts that may end a broadcast: every key of it, the running set last. */
const BROADCAST_KEYS = [
  'meta',
  'recipients',
  'claims',
  'tries',
  'blocked',
  'failed',
  'running',
] as const;

export const BROADCAST_CONTROL = scriptLayout({
  keys: BROADCAST_KEYS,
  args: ['action', 'now', 'member', 'ttlMs', 'reason'],
});

/**
 * pause, resume or cancel. Returns {'ok' | 'conflict' | 'missing', status}. A pause may
 * say why (`reason`, '' for none: an operator's pause); the reason goes with the pause.
 */
export const BROADCAST_CONTROL_LUA = (() => {
  const { K, A } = BROADCAST_CONTROL;
  return `
${FINISH}
local status = redis.call('HGET', ${K.meta}, 'status')
if not status then return {'missing', ''} end
local action, now = ${A.action}, tonumber(${A.now})
if action == 'pause' and status == 'running' then
  stop_running(now)
  redis.call('HSET', ${K.meta}, 'status', 'paused', 'updated', now)
  if ${A.reason} ~= '' then
    redis.call('HSET', ${K.meta}, 'paused_reason', ${A.reason})
  end
  redis.call('SREM', ${K.running}, ${A.member})
  return {'ok', 'paused'}
elseif action == 'resume' and status == 'paused' then
  redis.call('HDEL', ${K.meta}, 'paused_reason')
  redis.call('HSET', ${K.meta}, 'status', 'running', 'run_since', now, 'updated', now)
  redis.call('SADD', ${K.running}, ${A.member})
  return {'ok', 'running'}
elseif action == 'cancel' and (status == 'running' or status == 'paused') then
  stop_running(now)
  redis.call('HDEL', ${K.meta}, 'paused_reason')
  redis.call('HSET', ${K.meta}, 'status', 'cancelled', 'finished', now, 'updated', now)
  redis.call('SREM', ${K.running}, ${A.member})
  keep_for(tonumber(${A.ttlMs}))
  return {'ok', 'cancelled'}
end
return {'conflict', status}
`;
})();

export const BROADCAST_CLAIM = scriptLayout({
  keys: BROADCAST_KEYS,
  args: ['now', 'leaseMs', 'max', 'member', 'ttlMs'],
});

/**
 * Up to `max` recipients of a running broadcast, each claimed for `leaseMs`: first those
 * whose claim ran out (a retry now due, or a dead process's), then the next ones of the
 * list. A broadcast with nothing left ends here as `done`. Returns {status} when it is
 * not running; else {'running', method, params, then index, chat id, tries per recipient}.
 */
export const BROADCAST_CLAIM_LUA = (() => {
  const { K, A } = BROADCAST_CLAIM;
  return `
${FINISH}
local status = redis.call('HGET', ${K.meta}, 'status')
if status ~= 'running' then
  if not status then redis.call('SREM', ${K.running}, ${A.member}) end
  return {status or 'missing'}
end
local now, max = tonumber(${A.now}), tonumber(${A.max})
local lease = now + tonumber(${A.leaseMs})
local out = {'running', redis.call('HGET', ${K.meta}, 'method'), redis.call('HGET', ${K.meta}, 'params')}
local due = redis.call('ZRANGE', ${K.claims}, '-inf', now, 'BYSCORE', 'LIMIT', 0, max)
for _, index in ipairs(due) do
  redis.call('ZADD', ${K.claims}, lease, index)
  local chat = redis.call('LINDEX', ${K.recipients}, tonumber(index)) or ''
  out[#out + 1] = index
  out[#out + 1] = chat
  out[#out + 1] = redis.call('HGET', ${K.tries}, index) or '0'
end
local taken = #due
local next, total = tonumber(redis.call('HGET', ${K.meta}, 'next')), tonumber(redis.call('HGET', ${K.meta}, 'total'))
if taken < max and next < total then
  local last = math.min(total, next + max - taken) - 1
  local chats = redis.call('LRANGE', ${K.recipients}, next, last)
  for i, chat in ipairs(chats) do
    local index = next + i - 1
    redis.call('ZADD', ${K.claims}, lease, index)
    out[#out + 1] = tostring(index)
    out[#out + 1] = chat
    out[#out + 1] = '0'
  end
  next = next + #chats
  redis.call('HSET', ${K.meta}, 'next', next)
end
if #out == 3 and next >= total and redis.call('ZCARD', ${K.claims}) == 0 then
  stop_running(now)
  redis.call('HSET', ${K.meta}, 'status', 'done', 'finished', now, 'updated', now)
  redis.call('SREM', ${K.running}, ${A.member})
  keep_for(tonumber(${A.ttlMs}))
  return {'done'}
end
return out
`;
})();

export const BROADCAST_SETTLE = scriptLayout({
  keys: BROADCAST_KEYS,
  args: ['now', 'member', 'ttlMs'],
});

/**
 * Results of claimed recipients, four ARGV each after the named ones: index, outcome
 * (sent, blocked, failed, retry, wait, release), when a retry is due, and a failure's JSON.
 * A result whose claim is gone (settled already, by a process that claimed it again
 * after this one's lease ran out) is not counted twice. Returns the results counted.
 */
export const BROADCAST_SETTLE_LUA = (() => {
  const { K, A } = BROADCAST_SETTLE;
  return `
${FINISH}
local counted = 0
for i = 4, #ARGV, 4 do
  local index, outcome = ARGV[i], ARGV[i + 1]
  if redis.call('ZSCORE', ${K.claims}, index) then
    counted = counted + 1
    if outcome == 'retry' then
      redis.call('ZADD', ${K.claims}, ARGV[i + 2], index)
      redis.call('HINCRBY', ${K.tries}, index, 1)
    elseif outcome == 'wait' then
      redis.call('ZADD', ${K.claims}, ARGV[i + 2], index)
    elseif outcome == 'release' then
      redis.call('ZADD', ${K.claims}, 0, index)
    else
      redis.call('ZREM', ${K.claims}, index)
      redis.call('HDEL', ${K.tries}, index)
      redis.call('HINCRBY', ${K.meta}, outcome, 1)
      if outcome == 'blocked' then redis.call('RPUSH', ${K.blocked}, ARGV[i + 3]) end
      if outcome == 'failed' then redis.call('RPUSH', ${K.failed}, ARGV[i + 3]) end
    end
  end
end
local status = redis.call('HGET', ${K.meta}, 'status')
local now = tonumber(${A.now})
if status == 'running' and tonumber(redis.call('HGET', ${K.meta}, 'next')) >= tonumber(redis.call('HGET', ${K.meta}, 'total'))
  and redis.call('ZCARD', ${K.claims}) == 0 then
  stop_running(now)
  redis.call('HSET', ${K.meta}, 'status', 'done', 'finished', now, 'updated', now)
  redis.call('SREM', ${K.running}, ${A.member})
  keep_for(tonumber(${A.ttlMs}))
elseif status == 'cancelled' or status == 'done' then
  keep_for(tonumber(${A.ttlMs}))
end
return counted
`;
})();
