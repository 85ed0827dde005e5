import type { FastifyReply, FastifyRequest } from 'fastify';
import { outboundOf } from '@relaygram/config';
import type { GatewayAccess } from '../access/request-access';
import { callerSignal, type CallerSignal } from '../http/caller-signal';
import { sendAnswer, type HttpAnswer } from '../http/http-answer';
import type { GatewayRouteDeps } from '../http/route-deps';
import {
  isValidIdempotencyKey,
  type Claim,
  type OwnedKey,
  type StoredAnswer,
} from '../idempotency/idempotency-store';
import type { CallAnswer } from './rest-call';

export const INVALID_KEY = Symbol('invalid Idempotency-Key');
export const INVALID_KEY_ANSWER: HttpAnswer = Object.freeze({
  status: 400,
  body: { error: 'the Idempotency-Key header must be 1-255 printable ASCII characters' },
});

export function idempotencyKey(request: FastifyRequest): string | undefined | typeof INVALID_KEY {
  const value = request.headers['idempotency-key'];
  if (value === undefined) return undefined;
  return typeof value === 'string' && isValidIdempotencyKey(value) ? value : INVALID_KEY;
}

/**
 * Runs a call once per Idempotency-Key (Stripe's semantics, see IdempotencyStore): the
 * first runs it and keeps its answer if Telegram was reached; a repeat gets that answer
 * again, marked `Idempotent-Replayed: true`; without a key the call just runs.
 */
export async function answerOnce(
  deps: GatewayRouteDeps,
  access: GatewayAccess,
  reply: FastifyReply,
  key: string | undefined,
  fingerprint: () => string,
  run: (signal: CallerSignal) => Promise<CallAnswer>,
  leaseMs?: number,
): Promise<FastifyReply> {
  const signal = callerSignal(reply);
  if (key === undefined) return sendAnswer(reply, await run(signal));
  // Only a keyed call needs its digest: most calls carry no key.
  const claim = await beginKey(deps, access, key, fingerprint(), signal, leaseMs);
  if (claim.kind === 'replay') return sendStored(reply, claim.answer, true);
  if (claim.kind !== 'proceed') return sendAnswer(reply, claimAnswer(claim));
  let answer: CallAnswer;
  try {
    answer = await run(signal);
  } catch (error) {
    await claim.release();
    throw error;
  }
  const stored = toStored(answer);
  if (answer.reachedTelegram) await claim.complete(stored);
  else await claim.release();
  return sendStored(reply, stored, false);
}

export function beginKey(
  deps: GatewayRouteDeps,
  access: GatewayAccess,
  key: string,
  fingerprint: string,
  signal: CallerSignal,
  /** How long a claim outlives a gateway that died holding it (default: the longest call). */
  leaseMs?: number,
): Promise<Claim> {
  const options = deps.telegram.options;
  const maxWaitMs = outboundOf(access.bot).maxWaitMs;
  return deps.idempotency.begin(
    { client: access.client.name, bot: access.bot.id, key },
    fingerprint,
    {
      waitMs: maxWaitMs,
      // Longer than the first request can take: its wait, an upload and a retried call.
      leaseMs:
        leaseMs ?? maxWaitMs + options.uploadTimeoutMs + 2 * options.telegramTimeoutMs + 10_000,
      signal,
    },
  );
}

export function claimAnswer(claim: Exclude<Claim, OwnedKey>): HttpAnswer {
  switch (claim.kind) {
    case 'replay':
      // Stored as JSON text made by JSON.stringify: parsed and sent again, the same bytes.
      return {
        status: claim.answer.status,
        body: JSON.parse(claim.answer.body) as unknown,
        headers: { ...claim.answer.headers, 'idempotent-replayed': 'true' },
      };
    case 'mismatch':
      return {
        status: 422,
        body: {
          error:
            'this Idempotency-Key was already used with another request; use a new key for a new request',
        },
      };
    case 'in-progress':
      return {
        status: 409,
        body: { error: 'a request with this Idempotency-Key is still running; retry later' },
        headers: { 'retry-after': '1' },
      };
    case 'unavailable':
      return {
        status: 503,
        body: { error: 'Idempotency-Key needs Redis, which does not answer; retry later' },
        headers: { 'retry-after': '1' },
      };
  }
}

/** Sends the answer of a call that owns its key, keeping it first. */
export async function finishOwned(
  reply: FastifyReply,
  owned: OwnedKey | undefined,
  answer: CallAnswer,
): Promise<FastifyReply> {
  if (!owned) return sendAnswer(reply, answer);
  const stored = toStored(answer);
  await owned.complete(stored);
  return sendStored(reply, stored, false);
}

function toStored(answer: CallAnswer): StoredAnswer {
  return {
    status: answer.status,
    ...(answer.headers ? { headers: answer.headers } : {}),
    body: JSON.stringify(answer.body),
  };
}

function sendStored(reply: FastifyReply, stored: StoredAnswer, replayed: boolean): FastifyReply {
  if (stored.headers) reply.headers(stored.headers);
  if (replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(stored.status).type('application/json; charset=utf-8').send(stored.body);
}
