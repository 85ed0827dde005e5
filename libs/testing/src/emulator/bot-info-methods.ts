import { targetChat } from './message-factory';
import type { MethodCall, MethodTable } from './method-call';
import { badRequest } from './telegram-error';

/**
 * Methods bot frameworks call around start-up (getMe, commands) and the two that take a bot
 * off a server (logOut, close): answered plainly so frameworks run against the emulator.
 */
function getMe({ bot }: MethodCall): Record<string, unknown> {
  return {
    ...bot.user,
    can_join_groups: true,
    can_read_all_group_messages: false,
    supports_inline_queries: false,
    can_connect_to_business: false,
    has_main_web_app: false,
  };
}

function setMyCommands({ bot, params }: MethodCall): boolean {
  const commands = params['commands'];
  if (!Array.isArray(commands)) throw badRequest("can't parse commands JSON object");
  bot.commands = commands;
  return true;
}

export const botInfoMethods: MethodTable = {
  getMe,
  getChat: ({ bot, params }) => targetChat(bot, params),
  setMyCommands,
  getMyCommands: ({ bot }) => bot.commands,
  deleteMyCommands: ({ bot }) => {
    bot.commands = [];
    return true;
  },
  logOut: () => true,
  close: () => true,
};
