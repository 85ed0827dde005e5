import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Secret, type RouteConfig } from '@relaygram/config';
import type { DeadReason } from '@relaygram/contracts';
import { RelaygramMetrics } from '@relaygram/observability';
import { prepareRoute, type PreparedRoute } from '../delivery/delivery-request';

/** Counters of one route, resolved once: a label lookup per delivery adds up. */
export interface RouteCounters {
  delivered: { inc(): void };
  retried: { inc(): void };
  dead: { inc(): void };
  latency: { observe(seconds: number): void };
  attempts: { observe(attempts: number): void };
  /** One more dead letter of this route, by reason. */
  deadLettered(reason: DeadReason): void;
}

/** Everything a delivery of one route needs, built once per route and config. */
export interface RouteRuntime {
  readonly config: RouteConfig;
  readonly prepared: PreparedRoute;
  /** `http(s)://host:port` of the target. */
  readonly origin: string;
  /** Path and query of the target URL. */
  readonly path: string;
  readonly counters: RouteCounters;
}

export interface RouteChanges {
  added: string[];
  changed: string[];
  removed: string[];
}

/**
 * The routes' delivery settings, rebuilt only for routes a reload changed, so signers
 * and metric children are never made per delivery.
 */
@Injectable()
export class RouteRuntimes {
  #byName = new Map<string, { runtime: RouteRuntime; fingerprint: string }>();

  constructor(private readonly metrics: RelaygramMetrics) {}

  get(name: string): RouteRuntime | undefined {
    return this.#byName.get(name)?.runtime;
  }

  names(): string[] {
    return [...this.#byName.keys()];
  }

  /** Each route's worker slots on this replica (`concurrency`), as heartbeats announce them. */
  slots(): { route: string; slots: number }[] {
    return [...this.names()].map((name) => ({
      route: name,
      slots: this.get(name)!.config.concurrency,
    }));
  }

  origins(): Set<string> {
    return new Set([...this.#byName.values()].map((entry) => entry.runtime.origin));
  }

  /** Switches to these routes; a route whose settings did not change keeps its runtime. */
  apply(routes: readonly RouteConfig[]): RouteChanges {
    const next = new Map<string, { runtime: RouteRuntime; fingerprint: string }>();
    const changes: RouteChanges = { added: [], changed: [], removed: [] };
    for (const route of routes) {
      const fingerprint = fingerprintOf(route);
      const known = this.#byName.get(route.name);
      if (known && known.fingerprint === fingerprint) {
        next.set(route.name, known);
        continue;
      }
      next.set(route.name, { runtime: this.#build(route), fingerprint });
      (known ? changes.changed : changes.added).push(route.name);
    }
    for (const name of this.#byName.keys()) if (!next.has(name)) changes.removed.push(name);
    this.#byName = next;
    return changes;
  }

  #build(route: RouteConfig): RouteRuntime {
    const url = new URL(route.targetUrl);
    const { metrics } = this;
    const name = route.name;
    return {
      config: route,
      prepared: prepareRoute(route),
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      counters: {
        delivered: metrics.deliveries.labels({ route: name, outcome: 'delivered' }),
        retried: metrics.deliveries.labels({ route: name, outcome: 'retry' }),
        dead: metrics.deliveries.labels({ route: name, outcome: 'dead' }),
        latency: metrics.deliveryLatency.labels({ route: name }),
        attempts: metrics.deliveryAttempts.labels({ route: name }),
        deadLettered: (reason) => metrics.deadLettered.inc({ route: name, reason }),
      },
    };
  }
}

/**
 * Compares routes by every setting; secrets by digest, so none is kept in clear here
 * (and because `Secret.toJSON` would make every secret read `***`).
 */
function fingerprintOf(route: RouteConfig): string {
  const plain: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(route)) {
    plain[key] =
      value instanceof Secret
        ? `sha256:${createHash('sha256').update(value.reveal()).digest('hex')}`
        : value;
  }
  return JSON.stringify(plain);
}
