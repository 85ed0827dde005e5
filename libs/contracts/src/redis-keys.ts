/**
 * Every Redis key Relaygram writes, under one configured prefix. On Redis Cluster the
 * prefix is a hash tag (`{relaygram}`) so that every key, BullMQ's included, lands in
 * one slot and the multi-key scripts stay legal.
 */
export class RedisKeys {
  constructor(readonly prefix: string) {
    if (!prefix || /[\s:]/.test(prefix.replace(/^\{[^}]*\}$/, 'x'))) {
      throw new Error('redis.prefix: must be a non-empty name without spaces or colons');
    }
  }

  /** BullMQ's `prefix` option: its keys become `<prefix>:bull:<queue>:...`. */
  get bullPrefix(): string {
    return `${this.prefix}:bull`;
  }

  /** Bitmap of seen update_ids of one bot, one bit per id in a block of DEDUP_BLOCK_BITS. */
  dedup(bot: string, block: number): string {
    return `${this.prefix}:dedup:${bot}:${block}`;
  }

  /** A lane: list of encoded deliveries, head first. */
  lane(lane: string): string {
    return `${this.prefix}:lane:${lane}`;
  }

  /** Hash of a scheduled lane: schedule generation, and the head's attempt state. */
  laneState(lane: string): string {
    return `${this.prefix}:lane-state:${lane}`;
  }

  /** Set of the non-empty lanes of one route. */
  routeLanes(route: string): string {
    return `${this.prefix}:route-lanes:${route}`;
  }

  /**
   * List of the route's ready lanes: non-empty, unowned, due. Drain jobs pop from the
   * head; a lane is listed at most once (its state's `q` is `r` while listed).
   */
  readyLanes(route: string): string {
    return `${this.prefix}:ready:${route}`;
  }

  /** Sorted set of the route's lanes whose head backs off, by next attempt time (ms). */
  delayedLanes(route: string): string {
    return `${this.prefix}:delayed:${route}`;
  }

  /**
   * Hash of the route's live drain jobs: job id → `a<ms>` (armed, not started yet),
   * `i<dispatcher>` (waiting for a hand-off), `l<lane>` (holding the lane), `x` (its
   * dispatcher went silent while it waited).
   */
  drainJobs(route: string): string {
    return `${this.prefix}:drains:${route}`;
  }

  /**
   * Hash of the route's drain counters: `armed` (live jobs), `pending` (armed, not
   * started), `slots` (concurrency per dispatcher), `wake_at` (next wake job, ms).
   */
  drainState(route: string): string {
    return `${this.prefix}:drain-state:${route}`;
  }

  /** List of the route's waiting drain jobs (`<dispatcher>|<job id>`), last to wait first. */
  idleJobs(route: string): string {
    return `${this.prefix}:idle:${route}`;
  }

  /**
   * Pub/sub channel (not a key) where the scripts tell one dispatcher process of the
   * lanes they handed to its waiting jobs.
   */
  inbox(dispatcher: string): string {
    return `${this.prefix}:inbox:${dispatcher}`;
  }

  /** Sorted set of dispatcher processes by the Redis time (ms) until which they count as live. */
  get dispatchers(): string {
    return `${this.prefix}:dispatchers`;
  }

  /** Set of the non-empty lanes of a pull route (one per bot); no drain job touches them. */
  pullLanes(route: string): string {
    return `${this.prefix}:pull-lanes:${route}`;
  }

  /**
   * Pub/sub channel (not a key) on which the enqueue tells a pull route's waiting
   * getUpdates calls that a lane of it got a delivery (the message is the lane id).
   */
  pullNotice(route: string): string {
    return `${this.prefix}:pull-notice:${route}`;
  }

  /**
   * Hash of a pull lane's reader state, kept while the route is configured: `served`
   * (how many head entries a getUpdates has handed out), `allowed` (the client's
   * remembered allowed_updates), `poller` (the getUpdates call that may wait now),
   * `polled_at` (ms of the client's last call).
   */
  pullState(lane: string): string {
    return `${this.prefix}:pull-state:${lane}`;
  }

  /**
   * Hash route → ms: every pull route a gateway has served, with when one last reported
   * it configured; lanes of a route unreported for a while go dead as `route_removed`.
   */
  get pullRoutes(): string {
    return `${this.prefix}:pull-routes`;
  }

  /** Held by the gateway replica that runs the pull routes' expiry and clean-up this period. */
  get pullMaintenanceLock(): string {
    return `${this.prefix}:pull-maintenance-lock`;
  }

  /** Hash of one route's counters: queued, delivered, dead, last_error... */
  routeStats(route: string): string {
    return `${this.prefix}:route-stats:${route}`;
  }

  /**
   * Hash of one minute of a bot's or route's counts for the admin page's charts
   * (`accepted`, `delivered`, `failed`, `dead`, `queue`, latency buckets `l<i>`); it
   * expires a little over an hour after its last write. `minute` is unix ms / 60,000.
   */
  minuteStats(scope: 'bot' | 'route', name: string, minute: number): string {
    return `${this.prefix}:minute:${scope}:${name}:${minute}`;
  }

  /** Held by the process that samples the queue depths into the minute buckets this period. */
  get minuteDepthLease(): string {
    return `${this.prefix}:minute-depth-lease`;
  }

  /**
   * Hash route → JSON of why it fails (status, error, the answer's first bytes, since,
   * attempts), while its last attempts all failed; a delivered attempt removes it.
   */
  get failingRoutes(): string {
    return `${this.prefix}:failing-routes`;
  }

  /**
   * Stream of a route's delivery attempts, newest last (the delivery log): one entry per
   * attempt, written by the script that records its outcome; capped near
   * `delivery_log.attempts_per_route` and trimmed to `delivery_log.max_age`.
   */
  attemptLog(route: string): string {
    return `${this.prefix}:attempt-log:${route}`;
  }

  /**
   * Stream of a bot's updates as ingress met them (the delivery log's fan-out): the
   * update_id, queued / duplicate / ignored, and each delivery's route, id and lane;
   * capped near `delivery_log.updates_per_bot` and trimmed to `delivery_log.max_age`.
   */
  updateLog(bot: string): string {
    return `${this.prefix}:update-log:${bot}`;
  }

  /** Hash of one bot's counters: `queued` (deliveries of its updates waiting in lanes). */
  botStats(bot: string): string {
    return `${this.prefix}:bot-stats:${bot}`;
  }

  /** Set of every route that ever had a lane, for reconciliation after a reload. */
  get routes(): string {
    return `${this.prefix}:routes`;
  }

  /**
   * Hash route → ms: when a dispatcher last had the route configured, or when the
   * reconciler first met its lanes unconfigured. Lanes of a route are moved to dead
   * letters as `route_removed` only once this is old, so replicas on different configs
   * (a rolling update) never kill a route another replica still serves.
   */
  get routePresence(): string {
    return `${this.prefix}:route-presence`;
  }

  /** Global counter of lane generations and drain job ids (neither ever repeats). */
  get laneSeq(): string {
    return `${this.prefix}:lane-seq`;
  }

  /** Hash of one dead letter. */
  deadLetter(deliveryId: string): string {
    return `${this.prefix}:dead:${deliveryId}`;
  }

  /** Sorted set of all dead letters by time of death. */
  get deadIndex(): string {
    return `${this.prefix}:dead-index`;
  }

  deadByRoute(route: string): string {
    return `${this.prefix}:dead-route:${route}`;
  }

  deadByBot(bot: string): string {
    return `${this.prefix}:dead-bot:${bot}`;
  }

  /**
   * Hash of one outbox send (status, method, chat, attempts, times, Telegram's result
   * or error), kept OUTBOX_RECORD_TTL_MS after its last change.
   */
  outboxSend(bot: string, id: string): string {
    return `${this.prefix}:outbox:${bot}:${id}`;
  }

  /** Hash of one broadcast: status, call, client, counters, times. */
  broadcast(bot: string, id: string): string {
    return `${this.prefix}:broadcast:${bot}:${id}`;
  }

  /** List of a broadcast's recipients (chat ids), in the order given. */
  broadcastRecipients(bot: string, id: string): string {
    return `${this.prefix}:broadcast-to:${bot}:${id}`;
  }

  /** Sorted set of a broadcast's claimed recipients (list index) by when the claim runs out. */
  broadcastClaims(bot: string, id: string): string {
    return `${this.prefix}:broadcast-claims:${bot}:${id}`;
  }

  /** Hash of attempts so far per recipient (list index), for those tried more than once. */
  broadcastTries(bot: string, id: string): string {
    return `${this.prefix}:broadcast-tries:${bot}:${id}`;
  }

  /** List of a broadcast's recipients that ended `blocked` or `failed`, with Telegram's answer. */
  broadcastFailures(bot: string, id: string, reason: string): string {
    return `${this.prefix}:broadcast-${reason}:${bot}:${id}`;
  }

  /** Sorted set of a bot's broadcasts by creation time. */
  broadcasts(bot: string): string {
    return `${this.prefix}:broadcasts:${bot}`;
  }

  /** Set of the running broadcasts (`<bot>/<id>`), which dispatchers claim recipients of. */
  get broadcastsRunning(): string {
    return `${this.prefix}:broadcasts-running`;
  }

  /** The one poller of a bot holds this lease. */
  pollerLease(bot: string): string {
    return `${this.prefix}:poller-lease:${bot}`;
  }

  /** Next getUpdates offset of a polling bot. */
  pollerOffset(bot: string): string {
    return `${this.prefix}:poller-offset:${bot}`;
  }

  /** Hash with a bot's ingress state (poller or webhook watcher), shared across replicas. */
  botState(bot: string): string {
    return `${this.prefix}:bot-state:${bot}`;
  }

  /** Lock held by the replica that runs setWebhook for a bot. */
  webhookLock(bot: string): string {
    return `${this.prefix}:webhook-lock:${bot}`;
  }
}

/** update_ids per dedup bitmap: 65,536 bits = 8 KiB per block, 1 bit per update. */
export const DEDUP_BLOCK_BITS = 65_536;
