import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, relative } from 'node:path';
import { ChaosCluster } from './harness/chaos-cluster';
import { ServiceTraffic } from './harness/service-traffic';
import { formatDetails, formatTable } from './report/chaos-table';
import { scanForSecrets } from './report/secret-scan';
import { SCENARIOS } from './scenarios/all-scenarios';
import { runScenario, type ScenarioResult } from './scenarios/scenario';
import {
  CliArgs,
  installExitHandlers,
  onInterrupt,
  stopAllChildren,
  workspaceRoot,
} from '@relaygram/testing';
import { errorMessage } from '@relaygram/contracts';

interface ChaosOptions {
  quick: boolean;
  only?: string[];
  logLevel: string;
  jsonPath?: string;
}

const USAGE = `npm run chaos -- [--quick] [--only NAME,...] [--log-level LEVEL] [--json PATH]

  --quick        fewer updates and shorter faults (under 5 minutes in all)
  --only LIST    run only these scenarios: ${SCENARIOS.map((s) => s.name).join(', ')}
  --log-level L  LOG_LEVEL of the apps (default info, as shipped)
  --json PATH    also write the results as JSON

Needs \`npm run build\` (the apps run from apps/*/dist) and redis-server on PATH.
Every child's output is kept in tmp/chaos/<run>/.`;

function parseArgs(argv: string[]): ChaosOptions {
  const options: ChaosOptions = { quick: false, logLevel: 'info' };
  const args = new CliArgs(argv);
  for (let arg = args.next(); arg !== undefined; arg = args.next()) {
    const value = () => args.valueOf(arg);
    switch (arg) {
      case '--quick':
        options.quick = true;
        break;
      case '--only': {
        const names = value().split(',');
        for (const name of names) {
          if (!SCENARIOS.some((s) => s.name === name))
            throw new Error(`--only: no scenario ${name}`);
        }
        options.only = names;
        break;
      }
      case '--log-level':
        options.logLevel = value();
        break;
      case '--json':
        options.jsonPath = value();
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

function commandLine(options: ChaosOptions): string {
  const args = [
    options.quick ? '--quick' : '',
    options.only ? `--only ${options.only.join(',')}` : '',
    options.logLevel !== 'info' ? `--log-level ${options.logLevel}` : '',
  ].filter(Boolean);
  return `npm run chaos${args.length ? ` -- ${args.join(' ')}` : ''}`;
}

async function main(): Promise<number> {
  const options = parseArgs(process.argv.slice(2));
  const root = workspaceRoot();
  for (const app of ['ingress', 'dispatcher', 'gateway']) {
    if (!existsSync(join(root, 'apps', app, 'dist', 'main.js'))) {
      throw new Error(`apps/${app}/dist/main.js is missing: run \`npm run build\` first`);
    }
  }
  const runId = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
  const runDir = join(root, 'tmp', 'chaos', runId);
  mkdirSync(runDir, { recursive: true });
  const log = (line: string) =>
    process.stderr.write(`chaos ${new Date().toISOString().slice(11, 19)} ${line}\n`);
  const started = Date.now();
  const cluster = new ChaosCluster({ root, runDir, logLevel: options.logLevel });
  onInterrupt(() => cluster.stop());
  installExitHandlers('chaos');
  log(`${commandLine(options)}: output of every process in ${relative(root, runDir)}`);

  const scenarios = SCENARIOS.filter((s) => !options.only || options.only.includes(s.name));
  const results: ScenarioResult[] = [];
  const service = new ServiceTraffic(cluster);
  let failure: unknown;
  try {
    await cluster.start(log);
    service.start();
    for (const scenario of scenarios) {
      const result = await runScenario({ cluster, quick: options.quick, log }, scenario);
      results.push(result);
      log(
        `${result.name}: ${result.ok ? 'PASS' : 'FAIL'}: ${result.audit.delivered}/${result.audit.expected} delivered, ` +
          `${result.audit.lost} lost, ${result.audit.orderViolations} order violations, ` +
          `drain ${result.drainMs === undefined ? 'not reached' : `${(result.drainMs / 1000).toFixed(1)} s`}`,
      );
    }
  } catch (error) {
    failure = error;
    log(`run failed: ${(error instanceof Error && error.stack) || errorMessage(error)}`);
  } finally {
    await service.stop();
    // SIGTERM: the shutdown lines of every process are part of what is grepped.
    await cluster.stop().catch(() => stopAllChildren(3_000));
  }

  const leaks = scanForSecrets(runDir, cluster.secrets);
  const totalMs = Date.now() - started;
  const out: string[] = [];
  out.push('', formatTable(results), '', formatDetails(results), '');
  out.push(
    leaks.length === 0
      ? `secrets: none of the ${cluster.secrets.length} configured secrets (or their URL-encoded forms) ` +
          `appears in any process output, /metrics scrape, answer read, or Redis's AOF (${relative(root, runDir)})`
      : `secrets: LEAKED: ${leaks.map((l) => `${l.secret} in ${l.file} (${l.count}x)`).join('; ')}`,
  );
  const calls = [...service.statuses].map(([key, n]) => `${key}: ${n}`).join(', ');
  out.push(`service calls meanwhile (gateway, admin API): ${calls || 'none'}`);
  out.push(
    `command: ${commandLine(options)}; ${(totalMs / 60_000).toFixed(1)} min on ${cpus().length} CPUs ` +
      `(load average ${loadavg()[0]?.toFixed(2)}), Node ${process.version}`,
  );
  process.stdout.write(`${out.join('\n')}\n`);
  if (options.jsonPath) {
    writeFileSync(
      options.jsonPath,
      JSON.stringify({ command: commandLine(options), totalMs, results, leaks }, null, 2),
    );
  }
  const ok =
    failure === undefined &&
    leaks.length === 0 &&
    results.length === scenarios.length &&
    results.every((r) => r.ok);
  return ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`chaos: ${errorMessage(error)}\n`);
    process.exit(2);
  },
);
