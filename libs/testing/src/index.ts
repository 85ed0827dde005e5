export { TelegramEmulator, TELEGRAM_LIMITS } from './emulator/telegram-emulator';
export { EmulatorControlClient, EmulatorControlError } from './emulator/emulator-control-client';
export { UnknownBotError, generateToken, maskToken } from './emulator/bot-registry';
export {
  blockedByUserFailure,
  serverErrorFailure,
  tooManyRequestsFailure,
  unauthorizedFailure,
} from './emulator/forced-failures';
export { UPDATE_TYPES, DEFAULT_ALLOWED_UPDATES } from './emulator/update-types';
export type * from './emulator/emulator.types';
export {
  RecordingReceiver,
  type Delivery,
  type RecordingReceiverOptions,
  type Responder,
  type ResponseSpec,
  type WaitOptions,
} from './receiver/recording-receiver';
export { writeTestConfig, type TestConfigFile } from './test-config-file';
export { fuzzParameters } from './fuzz-parameters';
