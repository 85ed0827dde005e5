import { ConfigurableModuleBuilder } from '@nestjs/common';

/** Tuning of the gateway; the defaults suit production, tests shorten the timeouts. */
export interface GatewayOptions {
  /** Deadline of a Bot API call, 30 s by default. */
  telegramTimeoutMs?: number;
  /** Deadline of an upload (REST multipart, drop-in bodies streamed through), 120 s. */
  uploadTimeoutMs?: number;
  /**
   * Keep-alive connections to Telegram per bot, 128: above the calls a busy gateway has
   * in flight, so none waits in the pool's queue (where no deadline runs yet).
   */
  connectionsPerBot?: number;
  /** Largest file of a REST upload and largest streamed drop-in body, 50 MB. */
  uploadLimitBytes?: number;
  /** How long a getMe result counts for /healthz: 60 s after a success, 15 s after a failure. */
  healthTtlMs?: number;
  healthFailureTtlMs?: number;
  /** Deadline of the getMe behind /healthz, 1.5 s (the registry drops a source after 2 s). */
  healthTimeoutMs?: number;
}

/**
 * `GatewayModule.forRoot(options)`; `GatewayModule` as is provides no options, and the
 * gateway then runs with the defaults below.
 */
export const {
  ConfigurableModuleClass: GatewayModuleDefinition,
  MODULE_OPTIONS_TOKEN: GATEWAY_OPTIONS,
} = new ConfigurableModuleBuilder<GatewayOptions>().setClassMethodName('forRoot').build();

export type ResolvedGatewayOptions = Readonly<Required<GatewayOptions>>;

const MB = 1024 * 1024;

export function resolveGatewayOptions(options: GatewayOptions = {}): ResolvedGatewayOptions {
  return Object.freeze({
    telegramTimeoutMs: options.telegramTimeoutMs ?? 30_000,
    uploadTimeoutMs: options.uploadTimeoutMs ?? 120_000,
    connectionsPerBot: options.connectionsPerBot ?? 128,
    uploadLimitBytes: options.uploadLimitBytes ?? 50 * MB,
    healthTtlMs: options.healthTtlMs ?? 60_000,
    healthFailureTtlMs: options.healthFailureTtlMs ?? 15_000,
    healthTimeoutMs: options.healthTimeoutMs ?? 1_500,
  });
}
