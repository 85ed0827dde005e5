import { Injectable } from '@nestjs/common';
import pino, { type Logger } from 'pino';
import type { BotConfig, RelaygramConfig, RouteConfig } from './config.types';
import { reloadConfig } from './loader';
import { configEnvironment, type RuntimeEnv, type ServiceName } from './runtime-env';

export type ReloadListener = (
  next: RelaygramConfig,
  previous: RelaygramConfig,
) => void | Promise<void>;

export type ReloadOutcome =
  { ok: true; config: RelaygramConfig } | { ok: false; problems: readonly string[] };

/**
 * Holds the current configuration. A reload validates the new file first and swaps the
 * whole object in one assignment, so readers see either the old config or the new one.
 */
@Injectable()
export class ConfigService {
  private readonly logger: Logger;
  private current: RelaygramConfig;
  private readonly listeners = new Set<ReloadListener>();

  constructor(
    config: RelaygramConfig,
    readonly env: RuntimeEnv,
    readonly service: ServiceName,
    /** The process logger; a silent one when absent (unit tests). */
    logger: Logger = pino({ level: 'silent' }),
  ) {
    this.current = config;
    this.logger = logger.child({ context: ConfigService.name });
  }

  get config(): RelaygramConfig {
    return this.current;
  }

  bot(id: string): BotConfig | undefined {
    return this.current.bots.find((b) => b.id === id);
  }

  defaultBot(): BotConfig | undefined {
    return this.current.bots.find((b) => b.default);
  }

  route(name: string): RouteConfig | undefined {
    return this.current.routes.find((r) => r.name === name);
  }

  onReload(listener: ReloadListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Re-reads the config file (SIGHUP). An invalid file is refused and the old config stays. */
  async reload(): Promise<ReloadOutcome> {
    const result = reloadConfig(this.current, {
      path: this.current.source,
      env: configEnvironment(this.env),
    });
    if (!result.ok) {
      this.logger.error(
        `config reload refused, keeping the current config:\n${result.problems.join('\n')}`,
      );
      return result;
    }
    const previous = this.current;
    this.current = result.config;
    for (const listener of this.listeners) {
      try {
        await listener(result.config, previous);
      } catch (error) {
        this.logger.error({ err: error }, 'a component failed to apply the reloaded config');
      }
    }
    this.logger.info(`config reloaded from ${result.config.source}`);
    return result;
  }
}
