/**
 * Telegram says which limit a 429 is about only through whom it hits. One chat's
 * limit hits calls to that chat; the bot's own limit hits its calls to every chat at
 * once. So a 429 pauses the chat it named, unless this many distinct chats of the bot
 * got one within BOT_WIDE_WINDOW_MS, or the call named no chat: then the whole bot.
 */
export const BOT_WIDE_CHATS = 3;
export const BOT_WIDE_WINDOW_MS = 2_000;

export type PauseScope = 'bot' | 'chat';

/** `recentChats`: distinct chats with a 429 within the window, this one included. */
export function pauseScope(chat: string | undefined, recentChats: number): PauseScope {
  if (chat === undefined) return 'bot';
  return recentChats >= BOT_WIDE_CHATS ? 'bot' : 'chat';
}
