import type { DeliveryLogConfig } from '@relaygram/config';
import { DELIVERY_LOG_DEFAULTS } from '@relaygram/contracts';

/** The caps and age a delivery log script takes: a cap of 0 records nothing. */
export interface DeliveryLogLimits {
  readonly attemptCap: number;
  readonly updateCap: number;
  readonly maxAgeMs: number;
}

/**
 * The `delivery_log` settings the scripts are called with now. One object shared by the
 * stores of a process and replaced whole on a config reload, so the next script call
 * records (or stops recording) under the new settings.
 */
export class DeliveryLogSettings {
  #limits: DeliveryLogLimits;

  constructor(config: DeliveryLogConfig = DELIVERY_LOG_DEFAULTS) {
    this.#limits = limitsOf(config);
  }

  get limits(): DeliveryLogLimits {
    return this.#limits;
  }

  get maxAgeMs(): number {
    return this.#limits.maxAgeMs;
  }

  set(config: DeliveryLogConfig): void {
    this.#limits = limitsOf(config);
  }
}

function limitsOf(config: DeliveryLogConfig): DeliveryLogLimits {
  return {
    attemptCap: config.enabled ? config.attemptsPerRoute : 0,
    updateCap: config.enabled ? config.updatesPerBot : 0,
    maxAgeMs: config.maxAgeMs,
  };
}
