import { OutboundKeys } from './outbound-keys';
import { RedisKeys } from './redis-keys';

/**
 * The names an install has in Redis today. A running install keeps its queued
 * deliveries, dead letters and dedup window under exactly these names, so a change to
 * one strands data: it needs a migration (and `redis.shards: 1` must keep them as they
 * are). Every member of the key classes is listed here, so a new key gets pinned too.
 */
const KEYS: Record<string, (keys: RedisKeys) => string> = {
  bullPrefix: (k) => k.bullPrefix,
  dedup: (k) => k.dedup('sol-prod', 17),
  lane: (k) => k.lane('site:sol-prod:chat:42'),
  laneState: (k) => k.laneState('site:sol-prod:chat:42'),
  routeLanes: (k) => k.routeLanes('site'),
  readyLanes: (k) => k.readyLanes('site'),
  delayedLanes: (k) => k.delayedLanes('site'),
  drainJobs: (k) => k.drainJobs('site'),
  drainState: (k) => k.drainState('site'),
  idleJobs: (k) => k.idleJobs('site'),
  inbox: (k) => k.inbox('d-1'),
  dispatchers: (k) => k.dispatchers,
  pullLanes: (k) => k.pullLanes('legacy'),
  pullNotice: (k) => k.pullNotice('legacy'),
  pullState: (k) => k.pullState('legacy:sol-prod:strict'),
  pullRoutes: (k) => k.pullRoutes,
  pullMaintenanceLock: (k) => k.pullMaintenanceLock,
  routeStats: (k) => k.routeStats('site'),
  minuteStats: (k) => k.minuteStats('route', 'site', 29_000_000),
  minuteDepthLease: (k) => k.minuteDepthLease,
  failingRoutes: (k) => k.failingRoutes,
  attemptLog: (k) => k.attemptLog('site'),
  updateLog: (k) => k.updateLog('sol-prod'),
  botStats: (k) => k.botStats('sol-prod'),
  routes: (k) => k.routes,
  routePresence: (k) => k.routePresence,
  laneSeq: (k) => k.laneSeq,
  deadLetter: (k) => k.deadLetter('9b2f'),
  deadIndex: (k) => k.deadIndex,
  deadByRoute: (k) => k.deadByRoute('site'),
  deadByBot: (k) => k.deadByBot('sol-prod'),
  outboxSend: (k) => k.outboxSend('sol-prod', 'f0e1'),
  broadcast: (k) => k.broadcast('sol-prod', 'c4d5'),
  broadcastRecipients: (k) => k.broadcastRecipients('sol-prod', 'c4d5'),
  broadcastClaims: (k) => k.broadcastClaims('sol-prod', 'c4d5'),
  broadcastTries: (k) => k.broadcastTries('sol-prod', 'c4d5'),
  broadcastFailures: (k) => k.broadcastFailures('sol-prod', 'c4d5', 'blocked'),
  broadcasts: (k) => k.broadcasts('sol-prod'),
  broadcastsRunning: (k) => k.broadcastsRunning,
  pollerLease: (k) => k.pollerLease('sol-prod'),
  pollerOffset: (k) => k.pollerOffset('sol-prod'),
  botState: (k) => k.botState('sol-prod'),
  webhookLock: (k) => k.webhookLock('sol-prod'),
};

const OUTBOUND_KEYS: Record<string, (keys: OutboundKeys) => string> = {
  bins: (k) => k.bins('sol-prod'),
  chat: (k) => k.chat('sol-prod', '42'),
  group: (k) => k.group('sol-prod', '-100123'),
  pauses: (k) => k.pauses('sol-prod'),
  recent429: (k) => k.recent429('sol-prod'),
  idempotency: (k) => k.idempotency('ab12'),
  idempotencyDone: (k) => k.idempotencyDone,
};

/** Methods and getters a key class declares (its constructor aside). */
function members(type: { prototype: object }): string[] {
  return Object.getOwnPropertyNames(type.prototype)
    .filter((name) => name !== 'constructor')
    .sort();
}

function named<T>(keys: T, table: Record<string, (keys: T) => string>): Record<string, string> {
  return Object.fromEntries(Object.entries(table).map(([name, key]) => [name, key(keys)]));
}

describe('Redis key names', () => {
  it('pins every key of RedisKeys and OutboundKeys', () => {
    expect(Object.keys(KEYS).sort()).toEqual(members(RedisKeys));
    expect(Object.keys(OUTBOUND_KEYS).sort()).toEqual(members(OutboundKeys));
  });

  it('keeps the names an install already has in Redis', () => {
    expect(named(new RedisKeys('relaygram'), KEYS)).toEqual({
      bullPrefix: 'relaygram:bull',
      dedup: 'relaygram:dedup:sol-prod:17',
      lane: 'relaygram:lane:site:sol-prod:chat:42',
      laneState: 'relaygram:lane-state:site:sol-prod:chat:42',
      routeLanes: 'relaygram:route-lanes:site',
      readyLanes: 'relaygram:ready:site',
      delayedLanes: 'relaygram:delayed:site',
      drainJobs: 'relaygram:drains:site',
      drainState: 'relaygram:drain-state:site',
      idleJobs: 'relaygram:idle:site',
      inbox: 'relaygram:inbox:d-1',
      dispatchers: 'relaygram:dispatchers',
      pullLanes: 'relaygram:pull-lanes:legacy',
      pullNotice: 'relaygram:pull-notice:legacy',
      pullState: 'relaygram:pull-state:legacy:sol-prod:strict',
      pullRoutes: 'relaygram:pull-routes',
      pullMaintenanceLock: 'relaygram:pull-maintenance-lock',
      routeStats: 'relaygram:route-stats:site',
      minuteStats: 'relaygram:minute:route:site:29000000',
      minuteDepthLease: 'relaygram:minute-depth-lease',
      failingRoutes: 'relaygram:failing-routes',
      attemptLog: 'relaygram:attempt-log:site',
      updateLog: 'relaygram:update-log:sol-prod',
      botStats: 'relaygram:bot-stats:sol-prod',
      routes: 'relaygram:routes',
      routePresence: 'relaygram:route-presence',
      laneSeq: 'relaygram:lane-seq',
      deadLetter: 'relaygram:dead:9b2f',
      deadIndex: 'relaygram:dead-index',
      deadByRoute: 'relaygram:dead-route:site',
      deadByBot: 'relaygram:dead-bot:sol-prod',
      outboxSend: 'relaygram:outbox:sol-prod:f0e1',
      broadcast: 'relaygram:broadcast:sol-prod:c4d5',
      broadcastRecipients: 'relaygram:broadcast-to:sol-prod:c4d5',
      broadcastClaims: 'relaygram:broadcast-claims:sol-prod:c4d5',
      broadcastTries: 'relaygram:broadcast-tries:sol-prod:c4d5',
      broadcastFailures: 'relaygram:broadcast-blocked:sol-prod:c4d5',
      broadcasts: 'relaygram:broadcasts:sol-prod',
      broadcastsRunning: 'relaygram:broadcasts-running',
      pollerLease: 'relaygram:poller-lease:sol-prod',
      pollerOffset: 'relaygram:poller-offset:sol-prod',
      botState: 'relaygram:bot-state:sol-prod',
      webhookLock: 'relaygram:webhook-lock:sol-prod',
    });
    expect(named(new OutboundKeys('relaygram'), OUTBOUND_KEYS)).toEqual({
      bins: 'relaygram:outbound:sol-prod:bins',
      chat: 'relaygram:outbound:sol-prod:chat:42',
      group: 'relaygram:outbound:sol-prod:group:-100123',
      pauses: 'relaygram:outbound:sol-prod:pauses',
      recent429: 'relaygram:outbound:sol-prod:recent-429',
      idempotency: 'relaygram:idempotency:ab12',
      idempotencyDone: 'relaygram:idempotency-done',
    });
  });

  it('puts every key of a Redis Cluster install behind its one hash tag', () => {
    const cluster = new RedisKeys('{relaygram}');
    const outbound = new OutboundKeys(cluster);
    for (const key of [
      ...Object.values(named(cluster, KEYS)),
      ...Object.values(named(outbound, OUTBOUND_KEYS)),
    ]) {
      expect(key.startsWith('{relaygram}:')).toBe(true);
    }
  });

  it('refuses a prefix that would split or blur the names', () => {
    for (const prefix of ['', 'relay gram', 'relay:gram']) {
      expect(() => new RedisKeys(prefix)).toThrow('redis.prefix');
      expect(() => new OutboundKeys(prefix)).toThrow('redis.prefix');
    }
    expect(new RedisKeys('{relaygram}').prefix).toBe('{relaygram}');
  });
});
