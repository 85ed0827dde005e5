import { createHash, randomUUID } from 'node:crypto';
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { ConfigService } from '@relaygram/config';
import { OutboundKeys } from '@relaygram/contracts';
import { createRedis, REDIS, type RedisClient } from '@relaygram/queue';
import { COMPLETE_LUA, CLAIM_LUA, RELEASE_LUA } from './idempotency.lua';

/** An answer as it was sent, to be sent again: status, the headers that matter, JSON text. */
export interface StoredAnswer {
  status: number;
  headers?: Record<string, string>;
  body: string;
}

export interface IdempotencyScope {
  client: string;
  bot: string;
  key: string;
}

/** The first request with a key: it runs, then stores its answer, or gives the key back. */
export interface OwnedKey {
  readonly kind: 'proceed';
  complete(answer: StoredAnswer): Promise<void>;
  release(): Promise<void>;
}

export type Claim =
  | OwnedKey
  /** A repeat of a finished request: its answer, again. */
  | { readonly kind: 'replay'; readonly answer: StoredAnswer }
  /** The key was used with another request. */
  | { readonly kind: 'mismatch' }
  /** The first request still runs after the wait allowed. */
  | { readonly kind: 'in-progress' }
  /** Redis does not answer: the key cannot be honoured. */
  | { readonly kind: 'unavailable' };

type ScriptFn = (numKeys: number, ...args: (string | number)[]) => Promise<unknown>;

interface IdempotencyScripts {
  rgIdempotencyClaim: ScriptFn;
  rgIdempotencyComplete: ScriptFn;
  rgIdempotencyRelease: ScriptFn;
}

const SCRIPTS: Record<keyof IdempotencyScripts, string> = {
  rgIdempotencyClaim: CLAIM_LUA,
  rgIdempotencyComplete: COMPLETE_LUA,
  rgIdempotencyRelease: RELEASE_LUA,
};

/** How long an answer is kept. */
const ANSWER_TTL_MS = 24 * 60 * 60 * 1000;
/** Longest wait for one Redis command. */
const COMMAND_TIMEOUT_MS = 1_000;

/** Stripe's limit: keys are up to 255 characters; printable ASCII keeps them out of logs' way. */
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

export function isValidIdempotencyKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

/**
 * The digest that identifies a request for its key: the REST path and its parameters,
 * with object keys sorted so that the order a client wrote them in does not matter.
 */
export function requestFingerprint(path: string, params: unknown): string {
  return createHash('sha256')
    .update(path)
    .update('\n')
    .update(canonicalJson(params))
    .digest('base64url')
    .slice(0, 22);
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .map(
        (key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`,
      );
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * Idempotency keys of the REST API with Stripe's semantics, in Redis: a request with a
 * key (per client and bot) runs once; a repeat within 24 h gets its answer again
 * without calling Telegram; a repeat while it runs waits for it (told by pub/sub, no
 * polling) up to the bot's max_wait, then 409; the key with another request is a 422.
 * A request that never reached Telegram (refused by pacing) gives its key back, so a
 * retry runs. Each key costs one string: the request's fingerprint and the answer.
 */
@Injectable()
export class IdempotencyStore implements OnApplicationShutdown {
  readonly #redis: RedisClient & IdempotencyScripts;
  readonly #keys: OutboundKeys;
  readonly #subscriberFactory: () => RedisClient;
  readonly #waiters = new Map<string, Set<() => void>>();
  #subscriber?: RedisClient;
  #subscribed?: Promise<void>;

  constructor(@Inject(REDIS) redis: RedisClient, config: ConfigService) {
    for (const [name, lua] of Object.entries(SCRIPTS)) {
      if (!(name in redis)) redis.defineCommand(name, { lua });
    }
    this.#redis = redis as RedisClient & IdempotencyScripts;
    this.#keys = new OutboundKeys(config.config.redis.prefix);
    // Waiting repeats are woken through pub/sub, on a connection made at the first wait.
    this.#subscriberFactory = () =>
      createRedis(config.config.redis.url, {
        connectionName: `relaygram-${config.service}-idempotency`,
        mode: 'blocking',
      });
  }

  /** Closes the subscriber connection once requests have stopped. */
  async onApplicationShutdown(): Promise<void> {
    await this.close();
  }

  /**
   * The first request with this key owns it for `leaseMs` (past that, a crashed owner's
   * key is free again); a repeat waits up to `waitMs` for the first to finish.
   */
  async begin(
    scope: IdempotencyScope,
    fingerprint: string,
    options: { waitMs: number; leaseMs: number; signal?: AbortSignal | (() => AbortSignal) },
  ): Promise<Claim> {
    const digest = createHash('sha256')
      .update(`${scope.client}\n${scope.bot}\n${scope.key}`)
      .digest('base64url');
    const key = this.#keys.idempotency(digest);
    const owner = randomUUID();
    const deadline = Date.now() + options.waitMs;
    const claim = () =>
      this.#bounded(this.#redis.rgIdempotencyClaim(1, key, fingerprint, owner, options.leaseMs));
    try {
      for (;;) {
        let answer = (await claim()) as [string, string?];
        if (answer[0] === 'running') {
          const remaining = deadline - Date.now();
          const signal = typeof options.signal === 'function' ? options.signal() : options.signal;
          if (remaining <= 0 || signal?.aborted) return { kind: 'in-progress' };
          // Listen first, then look again: a finish between the two is never missed.
          const finished = this.#finished(digest, remaining, signal);
          await this.#subscribe();
          answer = (await claim()) as [string, string?];
          if (answer[0] === 'running') {
            await finished.done;
            continue;
          }
          finished.cancel();
        }
        switch (answer[0]) {
          case 'proceed':
            return this.#owned(key, fingerprint, owner, digest);
          case 'done':
            return { kind: 'replay', answer: JSON.parse(answer[1] ?? '{}') as StoredAnswer };
          case 'mismatch':
            return { kind: 'mismatch' };
        }
      }
    } catch {
      return { kind: 'unavailable' };
    }
  }

  async close(): Promise<void> {
    const subscriber = this.#subscriber;
    this.#subscriber = undefined;
    if (subscriber) await subscriber.quit().catch(() => subscriber.disconnect());
  }

  #owned(key: string, fingerprint: string, owner: string, digest: string): OwnedKey {
    const channel = this.#keys.idempotencyDone;
    return {
      kind: 'proceed',
      complete: async (answer) => {
        await this.#bounded(
          this.#redis.rgIdempotencyComplete(
            1,
            key,
            fingerprint,
            owner,
            JSON.stringify(answer),
            ANSWER_TTL_MS,
            channel,
            digest,
          ),
        ).catch(() => undefined);
      },
      release: async () => {
        await this.#bounded(
          this.#redis.rgIdempotencyRelease(1, key, fingerprint, owner, channel, digest),
        ).catch(() => undefined);
      },
    };
  }

  /** Resolves when the key's owner finishes (or gives it back), or after `ms`. */
  #finished(digest: string, ms: number, signal?: AbortSignal) {
    let settle!: () => void;
    const done = new Promise<void>((resolve) => (settle = resolve));
    const waiters = this.#waiters.get(digest) ?? new Set<() => void>();
    this.#waiters.set(digest, waiters);
    const cancel = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', cancel);
      waiters.delete(cancel);
      if (waiters.size === 0 && this.#waiters.get(digest) === waiters) this.#waiters.delete(digest);
      settle();
    };
    const timer = setTimeout(cancel, ms);
    signal?.addEventListener('abort', cancel, { once: true });
    waiters.add(cancel);
    return { done, cancel };
  }

  #subscribe(): Promise<void> {
    if (!this.#subscribed) {
      const subscriber = this.#subscriberFactory();
      this.#subscriber = subscriber;
      subscriber.on('message', (_channel: string, digest: string) => {
        for (const wake of [...(this.#waiters.get(digest) ?? [])]) wake();
      });
      this.#subscribed = subscriber.subscribe(this.#keys.idempotencyDone).then(
        () => undefined,
        (error: unknown) => {
          // The next wait makes a new connection; this one is dropped.
          this.#subscribed = undefined;
          this.#subscriber = undefined;
          subscriber.disconnect();
          throw error;
        },
      );
    }
    return this.#bounded(this.#subscribed);
  }

  #bounded<T>(promise: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('Redis gave no answer')), COMMAND_TIMEOUT_MS);
      }),
    ]).finally(() => clearTimeout(timer));
  }
}
