import fc from 'fast-check';
import { UnrecoverableError } from 'bullmq';
import { DeadReason, laneId } from '@relaygram/contracts';
import type { TakenDrainJob } from '../testing/drain-job-driver';
import { HandOffListener } from '../testing/hand-off-listener';
import { createQueueFixture, type QueueFixture } from '../testing/queue-fixture';
import type { ClaimedHead, DrainJobsToAdd, DrainResult, DrainStep } from './drain-script-io';
import type { FinishOutcome, ThenWhat } from './lane-store';
import { readRouteStats } from './lane-stats';
import { UpdateEnqueuer, newDeliveryId } from './update-enqueuer';
import { DrainScheduler } from './drain-scheduler';

/**
 * The lane engine against a model, on a real Redis and real BullMQ jobs: random
 * interleavings of enqueue (with and without the job add), job starts, sends and
 * finishes (delivered, dead, retry, yield, stop), hand-offs and their late arrival,
 * job crashes and re-runs, zombie wake-ups, jobs failing for good or deleted by hand,
 * reconciliation and time passing. After every step it checks what ENGINE-NOTES and
 * libs/queue/README.md promise:
 * - a non-empty lane is in exactly one state: owned by one job (whose entry names it),
 *   or ready (listed once in the ready list), or backing off (in the delayed set);
 *   an empty lane has no state and is listed nowhere;
 * - a lane's stored deliveries are exactly the model's, in acceptance order;
 * - a non-empty ready list has a live job that will take it (armed, or holding a lane),
 *   unless an arm was lost since the last reconcile, and no live job waits meanwhile;
 * - no lane has two senders: a send starts only behind the fence (lock token and lane
 *   generation), and a zombie's fence always fails;
 * - each lane's first sends follow acceptance order;
 * - counters add up: queued = waiting, delivered and dead as the model counted; the
 *   route's armed and pending jobs as its job entries say.
 *
 * Replay a failure with the seed fast-check prints: FC_SEED=<seed> (and FC_PATH=<path>);
 * FC_NUM_RUNS changes the number of runs.
 */

const ROUTE = 'model';
const BOT = 'bot';
const LANES = [0, 1, 2, 3, 4].map((chat) => laneId(ROUTE, BOT, { kind: 'chat', chatId: chat }));
const LIVE = 'live-dispatcher';
const SILENT = 'silent-dispatcher';

interface Session {
  taken: TakenDrainJob;
  head?: ClaimedHead;
  waiting: boolean;
  /** Passed the fence for its head and has not finished it yet. */
  sending: boolean;
  zombie: boolean;
  maxGen: number;
  dispatcher?: string;
}

interface World {
  f: QueueFixture;
  /** Hand-offs published to the live dispatcher. */
  inbox: HandOffListener;
  /** Time the model has let pass (Advance); its clock is the real one plus this. */
  offset: number;
  readonly now: number;
  /** Deliveries still in each lane, head first. */
  pending: Map<string, string[]>;
  /** Every delivery of each lane, in acceptance order. */
  accepted: Map<string, string[]>;
  delivered: number;
  dead: number;
  sessions: Session[];
  /** An armed job is known lost (add dropped, job deleted) since the last reconcile. */
  armLost: boolean;
  firstSends: Map<string, string[]>;
  updateId: number;
  log: string[];
}

/** What the runs actually exercised (printed with MODEL_STATS=1), so the test proves something. */
const exercised: Record<string, number> = {};
const saw = (what: string) => (exercised[what] = (exercised[what] ?? 0) + 1);

type Command = fc.AsyncCommand<object, World>;

function step(result: DrainResult | DrainStep): DrainStep {
  return 'step' in result ? result.step : result;
}

async function addJobs(w: World, jobs: DrainJobsToAdd): Promise<void> {
  // Wake jobs are added ready to run: the model's clock, not BullMQ's, says what is due.
  await w.f.scheduler.add({ arms: jobs.arms, wakes: jobs.wakes.map((j) => ({ ...j, at: 0 })) });
}

function apply(s: Session, result: DrainResult): void {
  const next = step(result);
  s.sending = false;
  s.head = undefined;
  s.waiting = false;
  if (next.kind === 'head') {
    s.head = next;
    s.maxGen = Math.max(s.maxGen, next.gen);
  } else if (next.kind === 'idle') {
    s.waiting = true;
  } else if (next.kind === 'stale') {
    throw new Error(`a live session got stale: ${s.taken.ref.jobId}`);
  }
}

const live = (w: World) => w.sessions.filter((s) => !s.zombie);
const pick = <T>(list: T[], i: number): T | undefined =>
  list.length ? list[i % list.length] : undefined;

class Enqueue implements Command {
  constructor(
    readonly lane: number,
    readonly dropAdd: boolean,
  ) {}
  check = () => true;
  async run(_: object, w: World) {
    const deliveryId = newDeliveryId();
    const lane = LANES[this.lane];
    w.updateId += 1;
    const enqueuer = this.dropAdd
      ? new UpdateEnqueuer(w.f.ctx, {
          add: () => Promise.reject(new Error('killed')),
        } as unknown as DrainScheduler)
      : w.f.enqueuer;
    const result = await enqueuer.enqueue({
      bot: BOT,
      updateId: w.updateId,
      body: Buffer.from(`{"update_id":${w.updateId}}`),
      deliveries: [{ route: ROUTE, lane, deliveryId }],
    });
    await result.jobsAdded;
    if (this.dropAdd) w.armLost = true;
    w.pending.get(lane)!.push(deliveryId);
    w.accepted.get(lane)!.push(deliveryId);
  }
  toString = () => `Enqueue(${this.lane}${this.dropAdd ? ', job add lost' : ''})`;
}

class Take implements Command {
  constructor(readonly dispatcher: 0 | 1 | 2) {}
  check = () => true;
  async run(_: object, w: World) {
    const taken = await w.f.driver.take(ROUTE);
    if (!taken) return;
    const dispatcher = [LIVE, SILENT, undefined][this.dispatcher];
    const s: Session = {
      taken,
      waiting: false,
      sending: false,
      zombie: false,
      maxGen: 0,
      dispatcher,
    };
    w.sessions.push(s);
    const result = await w.f.lanes.start(taken.ref, dispatcher, w.now);
    saw(`start -> ${step(result).kind}`);
    await addJobs(w, result.jobs);
    apply(s, result);
  }
  toString = () => `Take(${this.dispatcher})`;
}

/** The drainer's check before a send: its lock, and (what finish will check) the lane's fence. */
async function fenceHolds(w: World, s: Session): Promise<boolean> {
  if (!s.head) return false;
  const left = await w.f.lanes.lockLeft(s.taken.ref);
  const [gen, job] = await w.f.redis.hmget(w.f.ctx.keys.laneState(s.head.lane), 'gen', 'job');
  return left !== undefined && Number(gen) === s.head.gen && job === s.taken.ref.jobId;
}

class Send implements Command {
  constructor(readonly session: number) {}
  check = () => true;
  async run(_: object, w: World) {
    const s = pick(
      w.sessions.filter((x) => x.head && !x.sending),
      this.session,
    );
    if (!s?.head) return;
    const holds = await fenceHolds(w, s);
    if (s.zombie && holds) throw new Error(`zombie ${s.taken.ref.jobId} passed the fence`);
    if (!holds) return;
    const other = w.sessions.find((x) => x !== s && x.sending && x.head?.lane === s.head!.lane);
    if (other) throw new Error(`two senders on ${s.head.lane}`);
    s.sending = true;
    saw('send');
    const id = s.head.entry.deliveryId;
    const sends = w.firstSends.get(s.head.lane)!;
    if (!sends.includes(id)) sends.push(id);
  }
  toString = () => `Send(${this.session})`;
}

class Finish implements Command {
  constructor(
    readonly session: number,
    readonly outcome: 'delivered' | 'dead' | 'retry' | 'none',
    readonly then: ThenWhat,
    readonly delay: number,
  ) {}
  check = () => true;
  async run(_: object, w: World) {
    const s = pick(
      w.sessions.filter((x) => x.sending && !x.zombie),
      this.session,
    );
    if (!s?.head) return;
    const head = s.head;
    const outcome: FinishOutcome =
      this.outcome === 'delivered'
        ? { kind: 'delivered' }
        : this.outcome === 'dead'
          ? { kind: 'dead', dead: { reason: DeadReason.Rejected, attempts: head.attempt } }
          : this.outcome === 'retry'
            ? {
                kind: 'retry',
                retry: {
                  consecutive5xx: 0,
                  lastStatus: 503,
                  lastError: 'HTTP 503',
                  nextAttemptAt: w.now + this.delay,
                },
              }
            : { kind: 'none' };
    const then = this.outcome === 'none' ? 'stop' : this.then;
    const result = await w.f.lanes.finish(s.taken.ref, head, outcome, then, s.dispatcher, w.now);
    if (step(result).kind === 'stale') throw new Error(`a fenced finish was refused: ${head.lane}`);
    saw(`finish ${this.outcome} ${then} -> ${step(result).kind}`);
    const queue = w.pending.get(head.lane)!;
    if (this.outcome === 'delivered' || this.outcome === 'dead') {
      if (queue[0] !== head.entry.deliveryId)
        throw new Error(`finished a non-head on ${head.lane}`);
      queue.shift();
      if (this.outcome === 'delivered') w.delivered += 1;
      else w.dead += 1;
    }
    await addJobs(w, result.jobs);
    apply(s, result);
    if (step(result).kind === 'end') await w.f.driver.complete(s.taken);
  }
  toString = () => `Finish(${this.session}, ${this.outcome}, ${this.then}, +${this.delay}ms)`;
}

class DeliverInbox implements Command {
  check = () => true;
  async run(_: object, w: World) {
    const handOff = await w.inbox.take(0);
    if (!handOff) return;
    const s = live(w).find((x) => x.taken.ref.jobId === handOff.jobId && x.waiting);
    // The job took it through retire already (late arrival), or is gone: dropped, as the
    // dispatcher drops it.
    if (!s || handOff.head.gen <= s.maxGen) {
      saw('hand-off late or for a gone job');
      return;
    }
    s.waiting = false;
    s.head = handOff.head;
    s.maxGen = handOff.head.gen;
    saw('hand-off delivered');
  }
  toString = () => 'DeliverInbox';
}

class Retire implements Command {
  constructor(readonly session: number) {}
  check = () => true;
  async run(_: object, w: World) {
    const s = pick(
      live(w).filter((x) => x.waiting),
      this.session,
    );
    if (!s) return;
    const result = await w.f.lanes.retire(s.taken.ref, w.now);
    saw(`retire -> ${step(result).kind}`);
    await addJobs(w, result.jobs);
    apply(s, result);
    if (step(result).kind === 'end') await w.f.driver.complete(s.taken);
  }
  toString = () => `Retire(${this.session})`;
}

class Crash implements Command {
  constructor(
    readonly session: number,
    readonly forGood: boolean,
  ) {}
  check = () => true;
  async run(_: object, w: World) {
    const s = pick(
      live(w).filter((x) => x.head || x.waiting),
      this.session,
    );
    if (!s) return;
    s.zombie = true;
    saw(this.forGood ? 'job failed for good' : 'crash');
    // Its send in flight, if any, arrives or not; it starts no other.
    s.sending = false;
    if (this.forGood) {
      await s.taken.job.moveToFailed(
        new UnrecoverableError('failed for good'),
        s.taken.ref.lock,
        false,
      );
      w.armLost = true;
    } else {
      await w.f.driver.crash(s.taken);
    }
  }
  toString = () => `Crash(${this.session}${this.forGood ? ', for good' : ''})`;
}

class ZombieWakes implements Command {
  constructor(readonly session: number) {}
  check = () => true;
  async run(_: object, w: World) {
    const s = pick(
      w.sessions.filter((x) => x.zombie && x.head),
      this.session,
    );
    if (!s?.head) return;
    if (await fenceHolds(w, s)) throw new Error(`zombie ${s.taken.ref.jobId} passed the fence`);
    const before = await snapshot(w);
    const result = await w.f.lanes.finish(s.taken.ref, s.head, { kind: 'delivered' }, 'continue');
    if (step(result).kind !== 'stale') throw new Error('a zombie finish was not refused');
    saw('zombie refused');
    expect(await snapshot(w)).toEqual(before);
    s.head = undefined;
  }
  toString = () => `ZombieWakes(${this.session})`;
}

class DeleteWaitingJob implements Command {
  check = () => true;
  async run(_: object, w: World) {
    const [job] = await w.f.scheduler.queue(ROUTE).getWaiting(0, 0);
    if (!job) return;
    await job.remove();
    saw('job deleted');
    w.armLost = true;
  }
  toString = () => 'DeleteWaitingJob';
}

class Reconcile implements Command {
  check = () => true;
  async run(_: object, w: World) {
    const report = await w.f.reconciler.reconcile([ROUTE], { now: w.now, armedGraceMs: 0 });
    if (report.restarted || report.jobsDropped) saw('reconcile repaired');
    w.armLost = false;
  }
  toString = () => 'Reconcile';
}

class Advance implements Command {
  constructor(readonly ms: number) {}
  check = () => true;
  async run(_: object, w: World) {
    w.offset += this.ms;
  }
  toString = () => `Advance(${this.ms})`;
}

async function snapshot(w: World): Promise<unknown> {
  const { keys } = w.f.ctx;
  const lanes = await Promise.all(
    LANES.map(async (lane) => [
      await w.f.redis.hgetall(keys.laneState(lane)),
      await w.f.redis.llen(keys.lane(lane)),
    ]),
  );
  return [
    lanes,
    await w.f.redis.lrange(keys.readyLanes(ROUTE), 0, -1),
    await w.f.redis.zrange(keys.delayedLanes(ROUTE), 0, -1, 'WITHSCORES'),
    await w.f.redis.hgetall(keys.drainJobs(ROUTE)),
  ];
}

async function checkInvariants(w: World): Promise<void> {
  const { keys } = w.f.ctx;
  const redis = w.f.redis;
  const ready = await redis.lrange(keys.readyLanes(ROUTE), 0, -1);
  const delayed = await redis.zrange(keys.delayedLanes(ROUTE), 0, -1);
  const drains = await redis.hgetall(keys.drainJobs(ROUTE));
  const laneSet = new Set(await redis.smembers(keys.routeLanes(ROUTE)));
  for (const lane of LANES) {
    const expected = w.pending.get(lane)!;
    const stored = (await redis.lrangeBuffer(keys.lane(lane), 0, -1)).map(
      (raw) => JSON.parse(raw.subarray(0, raw.indexOf(0x0a)).toString()).d,
    );
    expect({ lane, stored }).toEqual({ lane, stored: expected });
    const state = await redis.hgetall(keys.laneState(lane));
    const listed = ready.filter((l) => l === lane).length;
    const backingOff = delayed.includes(lane);
    if (!expected.length) {
      expect({ lane, state, listed, backingOff, inSet: laneSet.has(lane) }).toEqual({
        lane,
        state: {},
        listed: 0,
        backingOff: false,
        inSet: false,
      });
      continue;
    }
    expect(laneSet.has(lane)).toBe(true);
    const owned = state.job !== undefined;
    const where = owned
      ? 'owned'
      : state.q === 'r'
        ? 'ready'
        : state.q === 'd'
          ? 'delayed'
          : 'nowhere';
    expect({ lane, where, listed, backingOff }).toEqual({
      lane,
      where: where === 'nowhere' ? 'owned, ready or delayed' : where,
      listed: where === 'ready' ? 1 : 0,
      backingOff: where === 'delayed',
    });
    if (owned) expect({ lane, entry: drains[state.job] }).toEqual({ lane, entry: `l${lane}` });
  }
  // The route's counters agree with its job entries.
  const counters = await redis.hmget(keys.drainState(ROUTE), 'armed', 'pending');
  const entries = Object.values(drains);
  expect({ armed: Number(counters[0] ?? 0), pending: Number(counters[1] ?? 0) }).toEqual({
    armed: entries.filter((e) => e !== 'x').length,
    pending: entries.filter((e) => e.startsWith('a')).length,
  });
  // No job entry names a lane another job owns.
  for (const [job, entry] of Object.entries(drains)) {
    if (!entry.startsWith('l')) continue;
    const owner = await redis.hget(keys.laneState(entry.slice(1)), 'job');
    if (owner !== null) expect({ job, owner }).toEqual({ job, owner: job });
  }
  if (ready.length && !w.armLost) {
    const queue = w.f.scheduler.queue(ROUTE);
    const armed = await Promise.all(
      Object.entries(drains)
        .filter(([, entry]) => entry.startsWith('a'))
        .map(async ([job]) => (await queue.getJobState(job)) === 'waiting'),
    );
    const holding = Object.values(drains).some((entry) => entry.startsWith('l'));
    expect({ ready, willBeTaken: armed.includes(true) || holding }).toEqual({
      ready,
      willBeTaken: true,
    });
    const liveWaiters = (await redis.lrange(keys.idleJobs(ROUTE), 0, -1)).filter((waiter) =>
      waiter.startsWith(`${LIVE}|`),
    );
    const stillWaiting = liveWaiters.filter(
      (waiter) => drains[waiter.split('|')[1]] === `i${LIVE}`,
    );
    expect({ ready, stillWaiting }).toEqual({ ready, stillWaiting: [] });
  }
  for (const lane of LANES) {
    const accepted = w.firstSends.get(lane)!;
    const order = w.accepted.get(lane)!;
    const positions = accepted.map((id) => order.indexOf(id));
    expect({ lane, positions }).toEqual({ lane, positions: [...positions].sort((a, b) => a - b) });
  }
  const stats = await readRouteStats(w.f.ctx, ROUTE);
  const waiting = [...w.pending.values()].reduce((n, ids) => n + ids.length, 0);
  expect({ queued: stats.queued, delivered: stats.delivered, dead: stats.deadTotal }).toEqual({
    queued: waiting,
    delivered: w.delivered,
    dead: w.dead,
  });
}

function withChecks(command: Command): Command {
  return {
    check: command.check,
    async run(model, w) {
      w.log.push(command.toString());
      await command.run(model, w);
      await checkInvariants(w);
    },
    toString: () => command.toString(),
  };
}

const finishes = fc
  .tuple(
    fc.nat(),
    fc.constantFrom('delivered', 'delivered', 'delivered', 'dead', 'retry', 'none'),
    fc.constantFrom<ThenWhat>('continue', 'continue', 'yield', 'stop'),
    fc.integer({ min: 0, max: 3000 }),
  )
  .map(([i, outcome, then, delay]) => new Finish(i, outcome as 'delivered', then, delay));

/** Weighted by repetition: the common steps often, the faults now and then. */
const commands = [
  ...Array.from({ length: 4 }, () =>
    fc
      .tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 9 }))
      .map(([lane, n]) => new Enqueue(lane, n === 0)),
  ),
  ...Array.from({ length: 3 }, () =>
    fc.constantFrom<0 | 1 | 2>(0, 0, 0, 1, 2).map((d) => new Take(d)),
  ),
  ...Array.from({ length: 4 }, () => fc.nat().map((i) => new Send(i))),
  ...Array.from({ length: 5 }, () => finishes),
  fc.constant(new DeliverInbox()),
  fc.constant(new DeliverInbox()),
  fc.nat().map((i) => new Retire(i)),
  fc.tuple(fc.nat(), fc.integer({ min: 0, max: 3 })).map(([i, n]) => new Crash(i, n === 0)),
  fc.nat().map((i) => new ZombieWakes(i)),
  fc.constant(new DeleteWaitingJob()),
  fc.constant(new Reconcile()),
  fc.integer({ min: 100, max: 4000 }).map((ms) => new Advance(ms)),
].map((arb) => arb.map(withChecks));

describe('lane engine, against a model (real Redis, real BullMQ jobs)', () => {
  it('keeps every lane in one state, one sender, acceptance order and the counts, whatever the interleaving', async () => {
    const runs = Number(process.env.FC_NUM_RUNS) || 40;
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 100, size: 'max' }), async (cmds) => {
        const f = await createQueueFixture('model');
        const inbox = await HandOffListener.start(f.ctx, LIVE);
        const w: World = {
          f,
          inbox,
          offset: 0,
          get now() {
            return Date.now() + this.offset;
          },
          pending: new Map(LANES.map((lane) => [lane, []])),
          accepted: new Map(LANES.map((lane) => [lane, []])),
          delivered: 0,
          dead: 0,
          sessions: [],
          armLost: false,
          firstSends: new Map(LANES.map((lane) => [lane, []])),
          updateId: 0,
          log: [],
        };
        try {
          await f.lanes.heartbeat(LIVE, 600_000, [{ route: ROUTE, slots: 2 }]);
          await fc.asyncModelRun(() => ({ model: {}, real: w }), cmds);
          await drainEverything(w);
        } finally {
          await inbox.close();
          await f.cleanup();
        }
      }),
      {
        numRuns: runs,
        ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}),
        ...(process.env.FC_PATH ? { path: process.env.FC_PATH } : {}),
      },
    );
    if (process.env.MODEL_STATS) process.stdout.write(`${JSON.stringify(exercised, null, 1)}\n`);
    expect(exercised['send']).toBeGreaterThan(0);
  }, 300_000);
});

/**
 * After the interleaving: zombies are gone for good, time passes, the reconciler runs,
 * and fresh jobs drain whatever is left, delivering everything: nothing was lost.
 */
async function drainEverything(w: World): Promise<void> {
  for (const s of live(w)) {
    if (s.waiting) {
      const result = await w.f.lanes.retire(s.taken.ref, w.now);
      await addJobs(w, result.jobs);
      apply(s, result);
    }
    if (s.head) {
      const result = await w.f.lanes.finish(
        s.taken.ref,
        s.head,
        { kind: 'none' },
        'stop',
        undefined,
        w.now,
      );
      await addJobs(w, result.jobs);
      apply(s, result);
    }
  }
  w.offset += 10 * 60_000;
  await w.f.reconciler.reconcile([ROUTE], { now: w.now, armedGraceMs: 0 });
  w.armLost = false;
  await checkInvariants(w);
  for (let round = 0; round < 500; round++) {
    const left = [...w.pending.values()].reduce((n, ids) => n + ids.length, 0);
    if (!left) return;
    const taken = await w.f.driver.take(ROUTE);
    if (!taken) {
      await w.f.reconciler.reconcile([ROUTE], { now: w.now, armedGraceMs: 0 });
      continue;
    }
    let result = await w.f.lanes.start(taken.ref, undefined, w.now);
    for (;;) {
      await addJobs(w, result.jobs);
      const next = step(result);
      if (next.kind !== 'head') break;
      w.pending.get(next.lane)!.shift();
      w.delivered += 1;
      const sends = w.firstSends.get(next.lane)!;
      if (!sends.includes(next.entry.deliveryId)) sends.push(next.entry.deliveryId);
      result = await w.f.lanes.finish(
        taken.ref,
        next,
        { kind: 'delivered' },
        'continue',
        undefined,
        w.now,
      );
    }
    await w.f.driver.complete(taken);
    await checkInvariants(w);
  }
  throw new Error(`not drained: ${JSON.stringify([...w.pending])}\n${w.log.join('\n')}`);
}
