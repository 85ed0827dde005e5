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
export { firstArrivals, updateIdOf } from './receiver/delivery-order';
export { runRelaygramCli, runRelaygramCliSync, type CliRun } from './relaygram-cli';
export {
  pollingBot,
  webhookBot,
  writeConfigObject,
  writeEmulatedConfig,
  writeTestConfig,
  type TestConfigFile,
} from './test-config-file';
export {
  captureLogs,
  describeAppBoot,
  discardLogs,
  inProcessStart,
  parsedLogs,
  testAppEnv,
  uniquePrefix,
  type AppStartOptions,
  type CapturedLogs,
  type LogLine,
  type StartedApp,
} from './app-test-kit';
export { fuzzParameters } from './fuzz-parameters';
export {
  exitOf,
  exited,
  installExitHandlers,
  killHard,
  onInterrupt,
  runningChildren,
  stopAllChildren,
  stopProcess,
  trackChild,
} from './process/child-processes';
export { tcpConnectionsTo } from './process/tcp-connections';
export {
  describeWithChromium,
  findChromium,
  HEADLESS_CHROMIUM_ARGS,
} from './browser/headless-chromium';
export { eventually, type EventuallyOptions } from './eventually';
export { deleteKeys, keysMatching, redisUrl } from './redis/test-redis';
export { replicatedRedis, type ReplicatedRedis, type StartedRedis } from './redis/replicated-redis';
export { thrownBy } from './thrown-by';
export { pngHead } from './png-head';
export { workspaceRoot } from './process/workspace-root';
export { CliArgs } from './process/cli-args';
export { closedPort } from './process/closed-port';
export { stablePort } from './process/stable-port';
export {
  describeApiDocuments,
  type DocumentedApp,
  type DocumentedAppStart,
} from './api-documents/api-documents-suite';
export { lintApiDocument } from './api-documents/document-lint';
export {
  coverageProblems,
  documentOperations,
  expectedOperations,
  type OpenApiDocument,
} from './api-documents/route-coverage';
export {
  answerProblem,
  expectDocumentedAnswer,
  type ApiAnswer,
} from './api-documents/documented-answers';
