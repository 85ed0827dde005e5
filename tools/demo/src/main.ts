import { join } from 'node:path';
import { runDemo } from './demo-run';
import { errorMessage } from '@relaygram/contracts';

const USAGE = `Usage: npm run demo [-- --keep]

Starts a Telegram emulator, two recording services and Relaygram (the standalone app,
as its own process), sends a few updates through and a reply back, and stops.
  --keep          keep everything running afterwards and print the admin page URL and token
  --from-source   run apps/standalone/src/main.ts instead of the build (development)`;

function main(argv: string[]): void {
  const unknown = argv.filter((arg) => !['--keep', '--from-source', '--help', '-h'].includes(arg));
  if (argv.includes('--help') || argv.includes('-h') || unknown.length) {
    if (unknown.length) process.stderr.write(`unknown option: ${unknown.join(' ')}\n`);
    process.stdout.write(`${USAGE}\n`);
    process.exit(unknown.length ? 2 : 0);
  }
  let requestStop: () => void = () => undefined;
  const stopRequested = new Promise<void>((resolve) => (requestStop = resolve));
  let signals = 0;
  const onSignal = () => {
    // A second Ctrl-C means now: the teardown is already under way.
    if (++signals > 1) process.exit(130);
    requestStop();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  runDemo({
    // tools/demo/{src,dist} → the repository root, where `npm start` runs.
    repo: join(__dirname, '..', '..', '..'),
    keep: argv.includes('--keep'),
    fromSource: argv.includes('--from-source'),
    env: process.env,
    print: (line) => process.stdout.write(`${line}\n`),
    stopRequested,
  }).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(
        `demo: ${(error instanceof Error && error.stack) || errorMessage(error)}\n`,
      );
      process.exit(1);
    },
  );
}

main(process.argv.slice(2));
