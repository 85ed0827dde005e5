import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { errorMessage } from '@relaygram/contracts';
import {
  FAILING_AFTER_ATTEMPTS,
  MINUTE_STATS_FLUSH_MS,
  withTimeout,
} from '@relaygram/observability';
import { QUEUE_CONTEXT, type QueueContext } from '@relaygram/queue';
import type { Logger } from 'pino';
import { DISPATCHER_LOGGER } from '../dispatcher-options';
import {
  extendStreak,
  routeFailingOf,
  type FailedAttempt,
  type FailureStreak,
} from './failure-streak';

const WRITE_TIMEOUT_MS = 3000;

/**
 * Why a route fails, for /healthz and the admin page (issue 19): each route's failed
 * attempts in a row on this process, kept in memory; once FAILING_AFTER_ATTEMPTS of
 * them, the streak (status, the answer's first bytes, since when) goes to one Redis hash
 * that every process reads. A delivered attempt ends the streak and clears the entry,
 * also one another dispatcher wrote (this process learns the failing routes at each
 * write). Writes happen on a timer, at most one per route per period, never in an
 * attempt's path; a Redis error is logged once per outage and retried at the next.
 */
@Injectable()
export class RouteFailureTracker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  readonly #streaks = new Map<string, FailureStreak>();
  /** Routes whose failing entry is to be written. */
  readonly #toWrite = new Set<string>();
  /** Routes delivered since the last write whose entry may be in Redis. */
  readonly #toClear = new Set<string>();
  /** Routes failing in Redis as last read. */
  #failingInRedis = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> | undefined;
  #down = false;

  constructor(
    @Inject(QUEUE_CONTEXT) private readonly ctx: QueueContext,
    @Inject(DISPATCHER_LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.#timer = setInterval(() => void this.write(), MINUTE_STATS_FLUSH_MS);
    this.#timer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.#timer);
    await this.write();
  }

  failed(route: string, attempt: FailedAttempt): void {
    const streak = extendStreak(this.#streaks.get(route), attempt);
    this.#streaks.set(route, streak);
    this.#toClear.delete(route);
    if (streak.attempts >= FAILING_AFTER_ATTEMPTS) this.#toWrite.add(route);
  }

  delivered(route: string): void {
    if (this.#streaks.delete(route) || this.#failingInRedis.has(route)) {
      this.#toWrite.delete(route);
      this.#toClear.add(route);
    }
  }

  /** Writes the failing entries and clears the delivered ones, then reads which are left. */
  write(): Promise<void> {
    this.#writing ??= this.#write().finally(() => (this.#writing = undefined));
    return this.#writing;
  }

  async #write(): Promise<void> {
    const { redis, keys } = this.ctx;
    const writes = [...this.#toWrite];
    const clears = [...this.#toClear];
    this.#toWrite.clear();
    this.#toClear.clear();
    const pipeline = redis.pipeline();
    for (const route of writes) {
      const streak = this.#streaks.get(route);
      if (streak) pipeline.hset(keys.failingRoutes, route, JSON.stringify(routeFailingOf(streak)));
    }
    if (clears.length) pipeline.hdel(keys.failingRoutes, ...clears);
    pipeline.hkeys(keys.failingRoutes);
    try {
      const results = (await withTimeout(pipeline.exec(), WRITE_TIMEOUT_MS)) ?? [];
      const failed = results.find(([error]) => error);
      if (failed) throw failed[0];
      this.#failingInRedis = new Set(results[results.length - 1][1] as string[]);
      if (this.#down) this.logger.info('failing routes written to Redis again');
      this.#down = false;
    } catch (error) {
      // Whatever happened since is newer: only what is still due goes back.
      for (const route of writes) if (this.#streaks.has(route)) this.#toWrite.add(route);
      for (const route of clears) if (!this.#streaks.has(route)) this.#toClear.add(route);
      if (!this.#down) {
        this.#down = true;
        this.logger.warn(
          { err: errorMessage(error) },
          'failing routes not written to Redis; retried at the next write',
        );
      }
    }
  }
}
