import { errorMessage } from '@relaygram/contracts';
import type { AddBotOptions, TelegramEmulatorOptions } from './emulator/emulator.types';
import { TelegramEmulator } from './emulator/telegram-emulator';

/**
 * `npm run emulator`: the Telegram emulator as its own process, for the demo and the chaos
 * suites. Listens on HOST:PORT (default 127.0.0.1:8081), creates the bots listed in the
 * EMULATOR_BOTS env var (a JSON array of { token?, username?, firstName? }) and in an optional
 * JSON argument (such an array, or emulator options with a `bots` array), prints one JSON line
 * { apiRoot, controlUrl, bots } once it answers, and stops on SIGTERM or SIGINT.
 */
interface MainConfig {
  options: TelegramEmulatorOptions;
  bots: AddBotOptions[];
}

function readConfig(): MainConfig {
  const options: TelegramEmulatorOptions = {
    port: Number(process.env['PORT'] ?? 8081),
    host: process.env['HOST'] ?? '127.0.0.1',
  };
  const bots: AddBotOptions[] = [];
  const fromEnv = process.env['EMULATOR_BOTS'];
  if (fromEnv) bots.push(...botList(JSON.parse(fromEnv), 'EMULATOR_BOTS'));
  const argument = process.argv[2];
  if (argument) {
    const value: unknown = JSON.parse(argument);
    if (Array.isArray(value)) {
      bots.push(...botList(value, 'the argument'));
    } else if (typeof value === 'object' && value !== null) {
      const { bots: listed, ...rest } = value as TelegramEmulatorOptions & { bots?: unknown };
      Object.assign(options, rest);
      if (listed !== undefined) bots.push(...botList(listed, 'the argument'));
    } else {
      throw new TypeError('the argument must be a JSON array of bots or an options object');
    }
  }
  if (!Number.isInteger(options.port) || (options.port as number) < 0) {
    throw new TypeError('PORT must be a port number');
  }
  return { options, bots };
}

function botList(value: unknown, source: string): AddBotOptions[] {
  if (!Array.isArray(value)) throw new TypeError(`${source}: bots must be a JSON array`);
  return value as AddBotOptions[];
}

async function main(): Promise<void> {
  const { options, bots } = readConfig();
  const emulator = await TelegramEmulator.start(options);
  const created = bots.map((bot) => emulator.addBot(bot));

  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    emulator.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`emulator: stop failed: ${String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);

  process.stdout.write(
    JSON.stringify({ apiRoot: emulator.apiRoot, controlUrl: emulator.controlUrl, bots: created }) +
      '\n',
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`emulator: ${errorMessage(error)}\n`);
  process.exit(1);
});
