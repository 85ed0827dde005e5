import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable } from '@nestjs/common';
import { ConfigService } from '@relaygram/config';
import { DISPATCHER_HEARTBEAT_MS, DISPATCHER_PRESENCE_TTL_MS } from '@relaygram/contracts';
import {
  DrainScheduler,
  LaneStore,
  QUEUE_CONTEXT,
  createRedis,
  decodeHandOff,
  type DrainJobsToAdd,
  type HandOff,
  type QueueContext,
  type RelaygramRedis,
} from '@relaygram/queue';
import type { Logger } from 'pino';
import { DISPATCHER_LOGGER } from '../dispatcher-options';
import { RouteRuntimes } from '../routes/route-runtimes';

interface Waiter {
  resolve(handOff: HandOff | undefined): void;
  timer: NodeJS.Timeout;
}

/**
 * Where this dispatcher process's waiting drain jobs receive the lanes handed to them.
 * A drain job with nothing ready waits (lingers) instead of ending; the enqueue script
 * (or any script that makes a lane ready) then gives the lane straight to the job that
 * began waiting last, and publishes the begun head on this process's channel. One
 * subscriber connection per process receives it and wakes the job: at a steady rate an
 * update costs no BullMQ job and no claim of its own, and the hand-off costs Redis one
 * write and this process no command at all (a blocking pop would cost a command per
 * message on this machine's expensive syscalls).
 *
 * The process announces itself every heartbeat (the scripts hand lanes only to a
 * dispatcher live on Redis's clock) with each route's slots. A hand-off that never
 * arrives (the subscriber was reconnecting) is not lost: the lane is recorded as the
 * job's, and the job's `retire` at the end of its wait returns it.
 */
@Injectable()
export class DispatcherInbox {
  /** Unique per process start; never contains `|` (the scripts' separator). */
  readonly id = `${hostname().replace(/[|\s]/g, '-')}:${process.pid}:${randomBytes(4).toString('hex')}`;
  readonly #subscriber: RelaygramRedis;
  readonly #waiters = new Map<string, Waiter>();
  /** Hand-offs that arrived before their job began to wait. */
  readonly #early = new Map<string, HandOff>();
  #heartbeat?: NodeJS.Timeout;
  #closed = false;
  #present = false;

  constructor(
    @Inject(QUEUE_CONTEXT) private readonly ctx: QueueContext,
    private readonly lanes: LaneStore,
    private readonly routes: RouteRuntimes,
    private readonly scheduler: DrainScheduler,
    config: ConfigService,
    @Inject(DISPATCHER_LOGGER) private readonly logger: Logger,
  ) {
    this.#subscriber = createRedis(config.config.redis.url, {
      mode: 'blocking',
      connectionName: 'relaygram-dispatcher-inbox',
    });
  }

  /** True once the process has announced itself (hand-offs may come). */
  get present(): boolean {
    return this.#present;
  }

  start(): void {
    const channel = this.ctx.keys.inbox(this.id);
    this.#subscriber.on('messageBuffer', (_channel: Buffer, message: Buffer) =>
      this.#deliver(message),
    );
    // ioredis subscribes again by itself after a reconnect.
    this.#subscriber
      .subscribe(channel)
      .catch((error: unknown) =>
        this.logger.warn(
          { err: error },
          'dispatcher inbox: subscribe failed; lanes handed to this process wait for their jobs to retire',
        ),
      );
    const beat = () => {
      if (this.#closed) return;
      this.lanes
        .heartbeat(this.id, DISPATCHER_PRESENCE_TTL_MS, this.routes.slots())
        .then(() => (this.#present = !this.#closed))
        .catch((error: unknown) =>
          this.logger.warn({ err: error }, 'dispatcher heartbeat failed; retrying'),
        );
    };
    beat();
    this.#heartbeat = setInterval(beat, DISPATCHER_HEARTBEAT_MS);
    this.#heartbeat.unref();
  }

  /**
   * Announce the routes' slots now (at start, after a reload), not at the next
   * heartbeat, and arm jobs for what already waits: a backlog left for this replica's
   * slots arms nothing else until a lane is newly scheduled. A failure is logged: the
   * heartbeat and the reconciler do the same a little later.
   */
  async announce(): Promise<void> {
    try {
      await this.scheduler.add(await this.#announce());
    } catch (error) {
      this.logger.warn({ err: error }, 'could not announce this dispatcher yet');
    }
  }

  async #announce(): Promise<DrainJobsToAdd> {
    const slots = this.routes.slots();
    await this.lanes.heartbeat(this.id, DISPATCHER_PRESENCE_TTL_MS, slots);
    this.#present = !this.#closed;
    const jobs: DrainJobsToAdd = { arms: [], wakes: [] };
    for (const { route } of slots) {
      const more = await this.lanes.ensureDraining(route);
      jobs.arms.push(...more.arms);
      jobs.wakes.push(...more.wakes);
    }
    return jobs;
  }

  /**
   * Waits up to `ms` for a lane handed to `jobId`; undefined when the wait ends without
   * one (the job then retires, which also collects a hand-off that went astray).
   */
  wait(jobId: string, ms: number): Promise<HandOff | undefined> {
    const early = this.#early.get(jobId);
    if (early) {
      this.#early.delete(jobId);
      return Promise.resolve(early);
    }
    if (this.#closed) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(jobId);
        resolve(undefined);
      }, ms);
      this.#waiters.set(jobId, { resolve, timer });
    });
  }

  /** Ends every wait now (shutdown): the jobs retire and hand back what they got. */
  interruptAll(): void {
    for (const [jobId, waiter] of this.#waiters) {
      clearTimeout(waiter.timer);
      this.#waiters.delete(jobId);
      waiter.resolve(undefined);
    }
  }

  /** Stops taking hand-offs at once (shutdown): the scripts skip this process from now on. */
  async leave(): Promise<void> {
    this.#present = false;
    if (this.#heartbeat) clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
    await this.lanes.leave(this.id).catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.leave();
    this.#closed = true;
    this.interruptAll();
    this.#early.clear();
    await this.#subscriber.quit().catch(() => this.#subscriber.disconnect());
  }

  #deliver(message: Buffer): void {
    let handOff: HandOff;
    try {
      handOff = decodeHandOff(message);
    } catch (error) {
      this.logger.error(
        { err: error },
        'dispatcher inbox: unreadable hand-off dropped (its job re-takes the lane when it retires)',
      );
      return;
    }
    const waiter = this.#waiters.get(handOff.jobId);
    if (waiter) {
      clearTimeout(waiter.timer);
      this.#waiters.delete(handOff.jobId);
      waiter.resolve(handOff);
      return;
    }
    // The job has not begun to wait yet (its script's answer is still on the way), or
    // has ended: in the latter case the hand-off is stale and is dropped at the next
    // wait of a job of that id, which never comes; bounded by the jobs of the process.
    this.#early.set(handOff.jobId, handOff);
  }

  /** Forget an early hand-off of a job that ended (its lane was taken back another way). */
  forget(jobId: string): void {
    this.#early.delete(jobId);
  }
}
