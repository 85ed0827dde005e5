import { DELIVERY_LOG_DEFAULTS, RedisKeys } from '@relaygram/contracts';
import { BENCH_BOT as BOT } from '../harness/bench-bot';
import { sleep, type BenchContext } from '../harness/bench-context';
import type { RedisTarget } from '../harness/redis-target';
import type { RelaygramInstall } from '../harness/relaygram-install';
import { failedRow, firstLine, row, type RowInput } from '../report/results';

const SECTION = '5 memory';
const MB = 2 ** 20;
/** The drain gives up when no delivery left the queue for this long. */
const STALL_MS = 30_000;

/** The updates POSTed to ingress and still queued, on a private Redis. */
export interface QueuedRun {
  redis: RedisTarget;
  install: RelaygramInstall;
  route: string;
  /** used_memory before the first POST. */
  before: number;
  updates: number;
  queued: number;
}

interface LogStream {
  what: string;
  key: string;
  cap: number;
  length: number;
  bytes: number;
}

const label = (updates: number) => updates.toLocaleString('en-US');
const specs = (updates: number) => ({
  attempts: {
    section: SECTION,
    name: `attempt log entries after ${label(updates)} deliveries`,
    unit: '',
  },
  updates: {
    section: SECTION,
    name: `update log entries after ${label(updates)} updates`,
    unit: '',
  },
  added: {
    section: SECTION,
    name: `Redis used_memory added, ${label(updates)} delivered`,
    unit: 'MB',
  },
  perEntry: { section: SECTION, name: 'Redis per delivery-log entry', unit: 'B' },
});

/**
 * What the delivery log keeps after a long run, with its caps at their defaults: a
 * dispatcher drains the queued updates to the receiver (one attempt each), and once
 * the queue is empty Redis's used_memory is read again, with each stream's length
 * (XLEN) against its cap and its size (MEMORY USAGE). The cap is approximate (XADD
 * MAXLEN ~ trims whole stream nodes), so a stream may hold up to one node more.
 */
export async function weighDeliveryLog(
  ctx: BenchContext,
  run: QueuedRun,
  receiverUrl: string,
): Promise<void> {
  const rows = specs(run.updates);
  const missAll = (reason: string) =>
    ctx.rows.push(...Object.values(rows).map((spec) => failedRow(spec, reason)));
  let dispatcher;
  try {
    dispatcher = await run.install.start('dispatcher', ctx.options.launch, 'memory-dispatcher');
  } catch (error) {
    missAll(`dispatcher did not start: ${firstLine(error)}`);
    return;
  }
  ctx.log(`memory: delivering the ${run.queued} queued updates to ${receiverUrl}`);
  const keys = new RedisKeys(run.install.prefix);
  const left = await drain(run.redis, keys.botStats(BOT));
  // Stopped before reading, so that nothing writes while Redis is weighed.
  await run.install.stop(dispatcher);
  if (left > 0) {
    missAll(`${left} deliveries still queued after ${STALL_MS / 1000} s without progress`);
    return;
  }
  const after = await usedMemory(run.redis);
  const nodeEntries = await streamNodeEntries(run.redis);
  const streams = [
    await weigh(
      run.redis,
      'attempts',
      keys.attemptLog(run.route),
      DELIVERY_LOG_DEFAULTS.attemptsPerRoute,
    ),
    await weigh(run.redis, 'updates', keys.updateLog(BOT), DELIVERY_LOG_DEFAULTS.updatesPerBot),
  ];
  const capRow = (spec: Omit<RowInput, 'value'>, stream: LogStream) =>
    row({
      ...spec,
      value: stream.length || undefined,
      target: { kind: 'at-most', max: stream.cap + nodeEntries, unit: '' },
      note: [
        stream.length === 0 && `${stream.key} is empty: nothing was logged`,
        `cap ${stream.cap} (default), + up to one stream node (stream-node-max-entries ${nodeEntries})`,
      ]
        .filter(Boolean)
        .join('; '),
    });
  const entries = streams[0].length + streams[1].length;
  const streamBytes = streams[0].bytes + streams[1].bytes;
  const perEntry = entries > 0 ? streamBytes / entries : undefined;
  ctx.rows.push(
    capRow(rows.attempts, streams[0]),
    capRow(rows.updates, streams[1]),
    row({
      ...rows.added,
      value: (after - run.before) / MB,
      note: `${mb(run.before)} before the first POST, ${mb(after)} once drained; the two streams ${mb(streamBytes)} (MEMORY USAGE)`,
    }),
    row({
      ...rows.perEntry,
      value: perEntry,
      note:
        perEntry === undefined
          ? 'nothing was logged'
          : `at the default caps: ${mb(perEntry * DELIVERY_LOG_DEFAULTS.attemptsPerRoute)} per route, ${mb(perEntry * DELIVERY_LOG_DEFAULTS.updatesPerBot)} per bot`,
    }),
  );
  ctx.details.deliveryLog = {
    updates: run.updates,
    queued: run.queued,
    usedBefore: run.before,
    usedAfter: after,
    streamNodeMaxEntries: nodeEntries,
    streams,
    bytesPerEntry: perEntry,
  };
}

/** Waits for the bot's queued count to reach 0; returns what is left when it stalls. */
async function drain(redis: RedisTarget, statsKey: string): Promise<number> {
  let left = Number.POSITIVE_INFINITY;
  let progressAt = Date.now();
  for (;;) {
    const now = Number((await redis.client.hget(statsKey, 'queued')) ?? 0);
    if (now <= 0) return 0;
    if (now < left) {
      left = now;
      progressAt = Date.now();
    } else if (Date.now() - progressAt > STALL_MS) {
      return now;
    }
    await sleep(250);
  }
}

async function weigh(
  redis: RedisTarget,
  what: string,
  key: string,
  cap: number,
): Promise<LogStream> {
  const length = await redis.client.xlen(key);
  // SAMPLES 0: every node of the stream counted, not an estimate from five.
  const bytes = Number(await redis.client.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) || 0;
  return { what, key, cap, length, bytes };
}

/** Entries a stream node holds at most: the slack of an approximate MAXLEN. */
async function streamNodeEntries(redis: RedisTarget): Promise<number> {
  const reply = (await redis.client.config('GET', 'stream-node-max-entries')) as string[];
  return Number(reply[1] ?? 100);
}

export async function usedMemory(redis: RedisTarget): Promise<number> {
  const info = await redis.client.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? Number.NaN);
}

const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
