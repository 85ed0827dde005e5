import { resolve } from 'node:path';
import type { Command } from 'commander';
import { defaultConfigPath, loadConfig, type LoadResult } from '@relaygram/config';

interface CheckOptions {
  /** False with --no-env. */
  env: boolean;
}

/** `relaygram config ...`: commands about the configuration file. */
export function registerConfigCommands(program: Command): void {
  const config = program
    .command('config')
    .helpGroup('Configuration:')
    .description('inspect the configuration file')
    .showHelpAfterError('(add --help for usage)');

  config
    .command('check')
    .description(
      'validate a config file as start-up would, without starting: exit 0 when it is valid, else print one line per problem and exit 1',
    )
    .argument('[file]', 'config file (default: $RELAYGRAM_CONFIG or config/relaygram.yaml)')
    .option(
      '--no-env',
      'check the file alone: read no environment variables (secrets, REDIS_URL, TELEGRAM_API_BASE)',
    )
    .action((file: string | undefined, options: CheckOptions) => {
      const path = resolve(file ?? defaultConfigPath());
      const noEnv = !options.env;
      const report = checkReport(path, loadConfig({ path, noEnv }), noEnv);
      if (report.stdout.length) process.stdout.write(`${report.stdout.join('\n')}\n`);
      if (report.stderr.length) process.stderr.write(`${report.stderr.join('\n')}\n`);
      process.exitCode = report.exitCode;
    });
}

interface CheckReport {
  readonly exitCode: 0 | 1;
  readonly stdout: readonly string[];
  readonly stderr: readonly string[];
}

function checkReport(path: string, result: LoadResult, noEnv: boolean): CheckReport {
  if (!result.ok) {
    const { problems } = result;
    return {
      exitCode: 1,
      stdout: [],
      stderr: [`invalid: ${path} — ${count(problems.length, 'problem')}`, ...problems],
    };
  }
  const { bots, routes, clients, warnings } = result.config;
  const pull = result.config.pullRoutes?.length ?? 0;
  const counts = [
    count(bots.length, 'bot'),
    count(routes.length + pull, 'route') + (pull ? ` (${pull} pull)` : ''),
    count(clients.length, 'client'),
  ].join(', ');
  return {
    exitCode: 0,
    stdout: [
      `ok: ${path} — ${counts}${noEnv ? ' (environment variables not checked)' : ''}`,
      ...warnings.map((warning) => `warning: ${warning}`),
    ],
    stderr: [],
  };
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
