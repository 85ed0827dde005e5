import { Command } from 'commander';
import { version } from '../package.json';
import { registerBroadcastCommands } from './commands/broadcast.command';
import { registerConfigCommands } from './commands/config.command';
import { registerDeadCommands } from './commands/dead.command';
import { registerDeliveryLogCommands } from './commands/delivery-log.command';
import { registerOutboxCommands } from './commands/outbox.command';
import { registerStatusCommand } from './commands/status.command';
import { registerWebhookCommands } from './commands/webhook.command';

const ENVIRONMENT_HELP = `
Environment:
  RELAYGRAM_CONFIG    config file when none is given (default config/relaygram.yaml)
  REDIS_URL           overrides redis.url
  TELEGRAM_API_BASE   overrides telegram.api_base`;

/** The `relaygram` command. Each command group lives in its own file under commands/. */
export function buildProgram(): Command {
  const program = new Command('relaygram')
    .description('Operate a Relaygram install: the gateway between Telegram and your services.')
    .version(version, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .helpCommand('help [command]', 'show help for a command')
    .showHelpAfterError('(add --help for usage)')
    .showSuggestionAfterError()
    .addHelpText('after', ENVIRONMENT_HELP);
  registerConfigCommands(program);
  registerDeadCommands(program);
  registerDeliveryLogCommands(program);
  registerOutboxCommands(program);
  registerBroadcastCommands(program);
  registerWebhookCommands(program);
  registerStatusCommand(program);
  return program;
}
