export { TelegramClient } from './telegram-client';
export { TelegramClients, type TelegramClientsOptions } from './telegram-clients';
export {
  TelegramAbortError,
  TelegramError,
  TelegramNetworkError,
  TelegramRequestError,
  TelegramTimeoutError,
} from './telegram.errors';
export {
  CALL_ABORTED,
  CALL_NETWORK_ERROR,
  CALL_TIMEOUT,
  type CallOptions,
  type ForwardRequest,
  type StreamedResponse,
  type TelegramCallEvent,
  type TelegramClientOptions,
  type TelegramUser,
} from './telegram.types';
export type { MultipartFields, MultipartFile } from './multipart-body';
export { isBotApiMethodName } from './bot-api-paths';
export { redactToken } from './redact-token';
