import { TelegramEmulator } from '@relaygram/testing';
import { serveChild } from './child-runtime';

/** The Telegram emulator in a process of its own, standing in for api.telegram.org. */
let emulator: TelegramEmulator | undefined;

async function start(): Promise<{ apiRoot: string }> {
  // Small rings: the gateway benchmark sends hundreds of thousands of messages.
  emulator = await TelegramEmulator.start({ historyLimit: 1000, messageLimit: 1000 });
  return { apiRoot: emulator.apiRoot };
}

function addBot({ username }: { username: string }): { token: string; id: number } {
  if (!emulator) throw new Error('emulator not started');
  const bot = emulator.addBot({ username });
  return { token: bot.token, id: bot.id };
}

serveChild({ start, addBot }, async () => {
  await emulator?.stop();
});
