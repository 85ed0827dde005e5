import type { BotConfig, RelaygramConfig } from '@relaygram/config';
import { createSecretMatcher, type SecretMatcher } from '@relaygram/signing';

/** A configured client as the gateway checks it. Holds no secret. */
export interface GatewayClient {
  readonly name: string;
  readonly bots: ReadonlySet<string>;
  /** Lower-cased allow-list; undefined allows every method but the reserved ones. */
  readonly methods?: ReadonlySet<string>;
}

/**
 * Clients and bots of one config, with the client tokens' digests computed once.
 * Requests only look things up here; a reload builds a new directory and swaps it in.
 */
export class ClientDirectory {
  readonly #match: SecretMatcher;
  readonly #clients: readonly GatewayClient[];
  readonly #bots: ReadonlyMap<string, BotConfig>;
  readonly #botsByNumericId: ReadonlyMap<string, BotConfig>;
  readonly #defaultBot?: BotConfig;

  constructor(config: RelaygramConfig) {
    this.#match = createSecretMatcher(config.clients.map((c) => c.token.reveal()));
    this.#clients = config.clients.map((c) =>
      Object.freeze({
        name: c.name,
        bots: new Set(c.bots),
        methods: c.methods ? new Set(c.methods.map((m) => m.toLowerCase())) : undefined,
      }),
    );
    this.#bots = new Map(config.bots.map((b) => [b.id, b]));
    const byNumericId = new Map<string, BotConfig>();
    for (const bot of config.bots) {
      if (bot.numericId && !byNumericId.has(bot.numericId)) byNumericId.set(bot.numericId, bot);
    }
    this.#botsByNumericId = byNumericId;
    this.#defaultBot = config.bots.find((b) => b.default);
  }

  /** The client whose token this is: one SHA-256 and a digest compare per client. */
  authenticate(token: string | undefined): GatewayClient | undefined {
    const index = this.#match(token);
    return index === -1 ? undefined : this.#clients[index];
  }

  bot(id: string): BotConfig | undefined {
    return this.#bots.get(id);
  }

  botByNumericId(numericId: string): BotConfig | undefined {
    return this.#botsByNumericId.get(numericId);
  }

  get defaultBot(): BotConfig | undefined {
    return this.#defaultBot;
  }

  get clientCount(): number {
    return this.#clients.length;
  }

  /** How many clients may use this bot. */
  clientsOf(botId: string): number {
    return this.#clients.filter((c) => c.bots.has(botId)).length;
  }
}

export function mayUseBot(client: GatewayClient, botId: string): boolean {
  return client.bots.has(botId);
}

/** Reserved methods are refused before this is asked. */
export function mayCallMethod(client: GatewayClient, method: string): boolean {
  return client.methods === undefined || client.methods.has(method.toLowerCase());
}
