export {
  createRelaygramClient,
  type RelaygramClient,
  type RelaygramClientOptions,
} from './relaygram-client';
export type { components, operations, paths } from './generated/public-api';
