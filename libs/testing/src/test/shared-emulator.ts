import type { AddBotOptions, BotIdentity } from '../emulator/emulator.types';
import { TelegramEmulator } from '../emulator/telegram-emulator';

/**
 * One emulator for a spec file, reset before each test and given a fresh bot, so no test
 * sees another's updates or calls. `use` hands both to the spec's own variables.
 */
export function emulatorPerSpec(
  use: (emu: TelegramEmulator, bot: BotIdentity) => void,
  bot: AddBotOptions = {},
): void {
  let emu: TelegramEmulator | undefined;
  beforeAll(async () => {
    emu = await TelegramEmulator.start();
  });
  afterAll(() => emu?.stop());
  beforeEach(async () => {
    if (!emu) throw new Error('the emulator did not start');
    await emu.reset();
    use(emu, emu.addBot(bot));
  });
}
