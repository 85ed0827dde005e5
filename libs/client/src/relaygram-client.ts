import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './generated/public-api';

export interface RelaygramClientOptions {
  /** The public listener, e.g. `http://relaygram:3000` (the gateway or standalone). */
  baseUrl: string;
  /** This service's client token (`clients[].token_env`), sent as X-Service-Token. */
  serviceToken: string;
  /** Another fetch (a test's, one with a proxy); the global one by default. */
  fetch?: typeof globalThis.fetch;
}

export type RelaygramClient = Client<paths>;

/**
 * A typed client of the public API: paths, bodies and answers come from the OpenAPI
 * document (`generated/public-api.ts`), so a renamed field fails to compile. It is
 * openapi-fetch with the service token on every call:
 *
 *   const relaygram = createRelaygramClient({ baseUrl, serviceToken });
 *   const { data, error, response } = await relaygram.POST(
 *     '/api/v1/{botId}/messages/send',
 *     { params: { path: { botId: 'shop-bot' } }, body: { chat_id: 42, text: 'hi' } },
 *   );
 */
export function createRelaygramClient(options: RelaygramClientOptions): RelaygramClient {
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { 'X-Service-Token': options.serviceToken },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}
