import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { PollerState } from '@relaygram/contracts';
import type { IngressRedis } from '../state/ingress-scripts';
import type { IngressContext } from '../state/ingress-store';

/**
 * The lease that makes one replica the poller of a bot. It is a Redis key holding the
 * holder's token with a TTL: the holder renews it every third of the TTL; a holder
 * that stops deletes it, and a dead one's lease expires, so a standby takes over
 * within the TTL either way. The offset and the published state are written only by
 * scripts that check the lease first.
 */
export class PollerLease {
  /** Identifies this poller in the lease key (host and pid, for operators reading Redis). */
  readonly token = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly leaseKey: string;
  private readonly offsetKey: string;
  private readonly stateKey: string;
  private readonly redis: IngressRedis;

  constructor(
    { redis, keys }: IngressContext,
    readonly bot: string,
    readonly ttlMs: number,
  ) {
    this.redis = redis;
    this.leaseKey = keys.pollerLease(bot);
    this.offsetKey = keys.pollerOffset(bot);
    this.stateKey = keys.botState(bot);
  }

  /** Takes the lease when it is free; true also when it is already ours (and extends it). */
  async acquire(): Promise<boolean> {
    return (await this.redis.rgLeaseAcquire(1, this.leaseKey, this.token, this.ttlMs)) === 1;
  }

  /** Extends the lease; false when it is no longer ours (expired, or another replica took it). */
  async renew(): Promise<boolean> {
    return (await this.redis.rgLeaseRenew(1, this.leaseKey, this.token, this.ttlMs)) === 1;
  }

  /** Frees the lease, recording the final state, if it is ours. */
  async release(state: PollerState = 'stopped'): Promise<boolean> {
    return (
      (await this.redis.rgLeaseRelease(
        2,
        this.leaseKey,
        this.stateKey,
        this.token,
        state,
        Date.now(),
      )) === 1
    );
  }

  /** The next getUpdates offset saved by the last holder; undefined before the first batch. */
  async readOffset(): Promise<number | undefined> {
    const raw = await this.redis.get(this.offsetKey);
    if (raw === null) return undefined;
    const offset = Number(raw);
    return Number.isSafeInteger(offset) ? offset : undefined;
  }

  /** Saves the next offset and extends the lease; false (nothing written) when it is not ours. */
  async saveOffset(offset: number): Promise<boolean> {
    return (
      (await this.redis.rgLeaseSaveOffset(
        2,
        this.leaseKey,
        this.offsetKey,
        this.token,
        offset,
        this.ttlMs,
      )) === 1
    );
  }

  /** Publishes this poller's state for every replica's /healthz; only while it holds the lease. */
  async publish(state: PollerState, problem: string | undefined, since: number): Promise<boolean> {
    return (
      (await this.redis.rgPollerState(
        2,
        this.leaseKey,
        this.stateKey,
        this.token,
        state,
        since,
        problem ?? '',
      )) === 1
    );
  }
}
