import type { BotConfig, RelaygramConfig, Secret } from '@relaygram/config';
import { safeEqual } from '@relaygram/signing';
import { TelegramClient } from './telegram-client';
import type { TelegramCallEvent } from './telegram.types';

export interface TelegramClientsOptions {
  onCall?: (event: TelegramCallEvent) => void;
  /** Default per-call timeout of every client. */
  timeoutMs?: number;
  /** Keep-alive connections per bot. */
  connections?: number;
}

interface Entry {
  client: TelegramClient;
  token: Secret;
  apiBase: string;
  numericId: string;
}

/** One TelegramClient per configured bot, kept in step with config reloads. */
export class TelegramClients {
  #byId = new Map<string, Entry>();
  #byNumericId = new Map<string, TelegramClient>();

  constructor(
    config: RelaygramConfig,
    private readonly options: TelegramClientsOptions = {},
  ) {
    this.#install(config, new Map());
  }

  get(botId: string): TelegramClient | undefined {
    return this.#byId.get(botId)?.client;
  }

  /** By the number before the colon of the bot's token (the drop-in path's bot id). */
  getByNumericId(numericId: string | number): TelegramClient | undefined {
    return this.#byNumericId.get(String(numericId));
  }

  ids(): string[] {
    return [...this.#byId.keys()];
  }

  /**
   * Switches to a reloaded config at once. A bot whose token and apiBase did not
   * change keeps its client (and its open connections and in-flight long poll);
   * clients of removed or changed bots are closed once their calls finish, which
   * the returned promise waits for.
   */
  async replace(config: RelaygramConfig): Promise<void> {
    const previous = this.#byId;
    this.#install(config, previous);
    const kept = new Set([...this.#byId.values()].map((e) => e.client));
    const retired = [...previous.values()].filter((e) => !kept.has(e.client));
    await Promise.all(retired.map((e) => e.client.close()));
  }

  /**
   * Closes every client after its in-flight calls, cutting off those still running after
   * `graceMs`; the registry is empty afterwards. Resolves to the ids of the bots whose
   * calls were cut off.
   */
  async closeAll(graceMs = Infinity): Promise<string[]> {
    const entries = [...this.#byId.entries()];
    this.#byId = new Map();
    this.#byNumericId = new Map();
    const cut = await Promise.all(entries.map(([, e]) => e.client.close(graceMs)));
    return entries.filter((_, i) => cut[i]).map(([id]) => id);
  }

  #install(config: RelaygramConfig, previous: ReadonlyMap<string, Entry>): void {
    const apiBase = config.telegram.apiBase;
    const byId = new Map<string, Entry>();
    const created: TelegramClient[] = [];
    try {
      for (const bot of config.bots) {
        const old = previous.get(bot.id);
        const reusable =
          old !== undefined &&
          old.apiBase === apiBase &&
          safeEqual(old.token.reveal(), bot.token.reveal()) &&
          !old.client.closed;
        const client = reusable ? old.client : this.#create(bot, apiBase);
        if (!reusable) created.push(client);
        byId.set(bot.id, { client, token: bot.token, apiBase, numericId: numericIdOf(bot) });
      }
    } catch (error) {
      // A bad token or apiBase refuses the whole config; nothing half-built stays open.
      for (const client of created) void client.destroy();
      throw error;
    }
    const byNumericId = new Map<string, TelegramClient>();
    for (const entry of byId.values()) {
      // Tokens are unique, so a numeric id names one bot; should two share it, the first wins.
      if (entry.numericId && !byNumericId.has(entry.numericId)) {
        byNumericId.set(entry.numericId, entry.client);
      }
    }
    this.#byId = byId;
    this.#byNumericId = byNumericId;
  }

  #create(bot: BotConfig, apiBase: string): TelegramClient {
    return new TelegramClient({
      apiBase,
      token: bot.token,
      botId: bot.id,
      timeoutMs: this.options.timeoutMs,
      connections: this.options.connections,
      onCall: this.options.onCall,
    });
  }
}

function numericIdOf(bot: BotConfig): string {
  if (bot.numericId) return bot.numericId;
  const token = bot.token.reveal();
  const head = token.slice(0, Math.max(0, token.indexOf(':')));
  return /^\d+$/.test(head) ? head : '';
}
