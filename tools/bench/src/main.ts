import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, freemem, loadavg, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { errorMessage } from '@relaygram/contracts';
import { firstLine, formatTable } from './report/results';
import { summarizeProfiles } from './report/profile-summary';
import { BenchChild } from './harness/bench-child';
import {
  SECTIONS,
  type BenchContext,
  type BenchOptions,
  type SectionName,
} from './harness/bench-context';
import { deleteRunKeys, runPrefix, sharedRedis, type RedisTarget } from './harness/redis-target';
import { staleBuilds } from './harness/relaygram-install';
import { ingressBench } from './sections/ingress.bench';
import { dispatcherBench } from './sections/dispatcher.bench';
import { endToEndBench } from './sections/end-to-end.bench';
import { gatewayBench } from './sections/gateway.bench';
import { memoryBench } from './sections/memory.bench';
import { pullBench } from './sections/pull.bench';
import { broadcastBench } from './sections/broadcast.bench';
import {
  installExitHandlers,
  onInterrupt,
  runningChildren,
  stopAllChildren,
  workspaceRoot,
  CliArgs,
} from '@relaygram/testing';

const USAGE = `npm run bench -- [--quick] [--json PATH] [--only ${SECTIONS.join(',')}]
                      [--cpu-prof [DIR]] [--from-source] [--log-level LEVEL]
                      [--app-node-options=FLAGS] [--same-sides]

  --quick         short runs (under 4 minutes in all)
  --json PATH     where to write the results (default bench-results.json)
  --only LIST     run only these sections
  --cpu-prof DIR  profile every Relaygram app and baseline (node --cpu-prof) into DIR
                  (default tmp/bench-profiles) and print each profile's hot spots
  --from-source   run the apps from TypeScript sources instead of apps/*/dist
  --log-level L   LOG_LEVEL of the apps (default info, as shipped)
  --app-node-options=FLAGS
                  node flags for the Relaygram apps only, as NODE_OPTIONS would give
                  them (e.g. "--max-semi-space-size=8"); baselines, emulator, receiver
                  and load generators run without them
  --same-sides    run the "off" side of each on/off comparison (pacing, the delivery
                  log) as its "on" side: the ratios then show the bench's own noise`;

function parseArgs(argv: string[]): BenchOptions {
  const root = workspaceRoot();
  const options: BenchOptions = {
    quick: false,
    jsonPath: 'bench-results.json',
    launch: { fromSource: false, logLevel: 'info' },
  };
  const args = new CliArgs(argv);
  for (let arg = args.next(); arg !== undefined; arg = args.next()) {
    const value = () => args.valueOf(arg);
    // With `=`: its value is itself made of flags.
    if (arg.startsWith('--app-node-options=')) {
      options.launch.nodeOptions = arg
        .slice(arg.indexOf('=') + 1)
        .split(/\s+/)
        .filter(Boolean);
      continue;
    }
    switch (arg) {
      case '--quick':
        options.quick = true;
        break;
      case '--json':
        options.jsonPath = value();
        break;
      case '--only': {
        const names = value().split(',');
        for (const name of names) {
          if (!(SECTIONS as readonly string[]).includes(name))
            throw new Error(`--only: no section ${name}`);
        }
        options.only = names as SectionName[];
        break;
      }
      case '--cpu-prof': {
        const dir = args.optionalValue() ?? join(root, 'tmp', 'bench-profiles');
        options.launch.cpuProfDir = resolve(dir);
        break;
      }
      case '--from-source':
        options.launch.fromSource = true;
        break;
      case '--log-level':
        options.launch.logLevel = value();
        break;
      case '--same-sides':
        options.sameSides = true;
        break;
      case '--help':
      case '-h':
        process.stdout.write(`${USAGE}\n`);
        process.exit(0);
        break;
      default:
        throw new Error(`unknown argument ${arg}\n${USAGE}`);
    }
  }
  return options;
}

function machine(redisVersion: string): Record<string, string | number> {
  let redisServer = redisVersion;
  try {
    redisServer = execFileSync('redis-server', ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    // not on PATH; the version Redis reported is enough
  }
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    node: process.version,
    redis: redisServer,
    totalMemoryMB: Math.round(totalmem() / 2 ** 20),
    freeMemoryMB: Math.round(freemem() / 2 ** 20),
    loadAverage: loadavg()
      .map((l) => l.toFixed(2))
      .join(' '),
  };
}

const SECTION_RUNNERS: Record<SectionName, (ctx: BenchContext) => Promise<void>> = {
  ingress: ingressBench,
  dispatcher: dispatcherBench,
  e2e: endToEndBench,
  gateway: gatewayBench,
  memory: memoryBench,
  pull: pullBench,
  broadcast: broadcastBench,
};

type Log = (message: string) => void;

async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  installExitHandlers('bench');
  const log: Log = (message) => process.stderr.write(`bench: ${message}\n`);
  const started = Date.now();
  warnOfStaleBuilds(options, log);
  if (options.launch.cpuProfDir) mkdirSync(options.launch.cpuProfDir, { recursive: true });

  const redis = await sharedRedis();
  const prefix = runPrefix();
  onInterrupt(() => deleteRunKeys(redis.client, prefix));
  let emulator: BenchChild | undefined;
  try {
    emulator = await BenchChild.start('emulator');
    const context = await benchContext(options, prefix, redis, emulator, log);
    log(`run ${prefix} on ${redis.source} (${redis.url}), ${options.quick ? 'quick' : 'full'}`);
    await runSections(context);
    report(context, started);
  } finally {
    await emulator?.stop();
    await deleteRunKeys(redis.client, prefix).catch(() => 0);
    await redis.stop();
    const left = runningChildren();
    if (left.length) {
      log(`stopping ${left.map((p) => `${p.name} (${p.pid})`).join(', ')}`);
      await stopAllChildren();
    }
  }
}

function warnOfStaleBuilds(options: BenchOptions, log: Log): void {
  if (options.launch.fromSource) return;
  const stale = staleBuilds();
  if (stale.length) {
    log(
      `WARNING: sources newer than their dist (${stale.join(', ')}): run \`npm run build\` or pass --from-source`,
    );
  }
}

/** The context every section gets, around the emulator started with the bot they all use. */
async function benchContext(
  options: BenchOptions,
  prefix: string,
  redis: RedisTarget,
  emulator: BenchChild,
  log: Log,
): Promise<BenchContext> {
  const { apiRoot } = await emulator.call<{ apiRoot: string }>('start');
  const username = 'bench_bot';
  const bot = await emulator.call<{ token: string; id: number }>('addBot', { username });
  return {
    options,
    runPrefix: prefix,
    redis,
    emulator: { child: emulator, apiRoot, bot: { ...bot, username } },
    rows: [],
    rss: {},
    idleRss: {},
    referenceRss: {},
    heap: {},
    details: {},
    log,
  };
}

/** Each section in turn; one that throws leaves a MISS row and the run goes on. */
async function runSections(context: BenchContext): Promise<void> {
  const { options, redis, runPrefix: prefix, rows, log } = context;
  for (const name of options.only ?? SECTIONS) {
    const sectionStart = Date.now();
    log(`section ${name}`);
    try {
      await SECTION_RUNNERS[name](context);
    } catch (error) {
      log(`section ${name} failed: ${errorText(error)}`);
      rows.push({
        section: name,
        name: 'section failed',
        unit: '',
        verdict: 'MISS',
        note: firstLine(error),
      });
    } finally {
      await deleteRunKeys(redis.client, prefix).catch(() => 0);
    }
    log(`section ${name} took ${Math.round((Date.now() - sectionStart) / 1000)} s`);
  }
}

/** The table on stdout, the results file, and each profile's hot spots when the run profiled. */
function report(context: BenchContext, started: number): void {
  const { options, redis, rows, log } = context;
  const elapsedSec = Math.round((Date.now() - started) / 1000);
  const table = formatTable(rows);
  const info = machine(redis.version);
  process.stdout.write(
    `\nRelaygram benchmark, ${options.quick ? 'quick' : 'full'} run, ${elapsedSec} s\n` +
      `machine: ${info.cpus} x ${info.cpuModel}, node ${info.node}, ${info.redis}, ` +
      `${info.freeMemoryMB} MB free of ${info.totalMemoryMB} MB, load average ${info.loadAverage}\n` +
      `redis: ${redis.source}\n` +
      (options.launch.nodeOptions?.length
        ? `apps run with: ${options.launch.nodeOptions.join(' ')}\n`
        : '') +
      (options.sameSides
        ? 'same sides: pacing off and the delivery log off ran as on (an A/A run)\n'
        : '') +
      `\n${table}\n`,
  );
  const results = {
    startedAt: new Date(started).toISOString(),
    elapsedSec,
    mode: options.quick ? 'quick' : 'full',
    machine: info,
    redis: { source: redis.source, version: redis.version },
    appNodeOptions: options.launch.nodeOptions ?? [],
    sameSides: options.sameSides === true,
    rows,
    details: context.details,
  };
  writeFileSync(options.jsonPath, `${JSON.stringify(results, null, 2)}\n`);
  log(`results written to ${options.jsonPath}`);
  if (options.launch.cpuProfDir) {
    process.stdout.write(`\n${summarizeProfiles(options.launch.cpuProfDir)}\n`);
  }
}

/** The stack where there is one: a failed section or run is read from it. */
function errorText(error: unknown): string {
  return (error instanceof Error && error.stack) || errorMessage(error);
}

// A MISS is a result, not a failure: the exit code is 0 once the table is printed.
main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench: ${errorText(error)}\n`);
    process.exit(2);
  },
);
