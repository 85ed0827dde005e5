export { TelegramClient } from './telegram-client';
export { TelegramClients, type TelegramClientsOptions } from './telegram-clients';
export * from './telegram.errors';
export * from './telegram.types';
export type { MultipartFields, MultipartFile } from './multipart-body';
export { isBotApiMethodName } from './bot-api-paths';
export { redactToken } from './redact-token';
export { readWhole } from './answer-body';
