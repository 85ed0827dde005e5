import type { FastifyReply } from 'fastify';
import type { PaceResult } from '@relaygram/pacing';
import { TelegramError } from '@relaygram/telegram';
import type { GatewayAccess } from '../access/request-access';
import { logCall } from '../http/call-log';
import { callerGone, type CallerSignal } from '../http/caller-signal';
import type { HttpAnswer } from '../http/http-answer';
import type { GatewayRouteDeps } from '../http/route-deps';
import { pacedRefusal } from '../pacing/gateway-pacing.service';
import { restTelegramFailure, retryDelayMs } from '../telegram/telegram-error.mapper';
import type { RestOperation } from './rest-operations';

export type BodyEncoding = 'json' | 'form';

/** One REST route, made once when it is registered. */
export interface RestRoute {
  deps: GatewayRouteDeps;
  /** The named operation; undefined for `raw/:method`. */
  op?: RestOperation;
  /** What the caller gets of Telegram's result: itself, or `{ok, result}` for raw calls. */
  answer(result: unknown): unknown;
}

/** An answer before it is sent; `reachedTelegram` says whether it may be replayed. */
export interface CallAnswer extends HttpAnswer {
  reachedTelegram: boolean;
}

/**
 * One Bot API call, after its slot. A 429 from Telegram pauses what it hit for every
 * replica; one with retry_after of at most 5 s is waited out (through the pacer, so
 * the wait is the pause) and the call made once more, unless the caller hung up.
 */
export async function callTelegram(
  route: RestRoute,
  access: GatewayAccess,
  reply: FastifyReply,
  params: Record<string, unknown>,
  encoding: BodyEncoding,
  signal: CallerSignal,
): Promise<CallAnswer> {
  const { deps } = route;
  let pace = await deps.pacing.pace(access.bot, access.method, params, signal);
  const refusal = paceRefusal(access, pace);
  if (refusal) {
    logCall(deps.logger, false, access, refusal.status, 'paced', 429);
    return refusal;
  }
  const call = () =>
    encoding === 'form'
      ? access.telegram.callUrlencoded(access.method, params)
      : access.telegram.call(access.method, params);
  let result: unknown;
  try {
    try {
      result = await call();
    } catch (error) {
      if (pace.kind === 'go') await reportTelegram429(deps, access, pace, error);
      const delay = retryDelayMs(error, true);
      if (delay === undefined || callerGone(reply)) throw error;
      if (pace.kind === 'go') {
        pace = await deps.pacing.pace(access.bot, access.method, params, signal);
        if (pace.kind !== 'go') throw error;
      } else {
        await sleep(delay);
      }
      if (callerGone(reply)) throw error;
      try {
        result = await call();
      } catch (again) {
        if (pace.kind === 'go') await reportTelegram429(deps, access, pace, again);
        throw again;
      }
    }
  } catch (error) {
    return failure(deps, access, error);
  }
  logCall(deps.logger, false, access, 200);
  return { status: 200, body: route.answer(result), reachedTelegram: true };
}

export function failure(deps: GatewayRouteDeps, access: GatewayAccess, error: unknown): CallAnswer {
  const answer = restTelegramFailure(error);
  const errorCode = answer.body.error_code;
  const problem = (answer.body as { error?: string }).error;
  logCall(
    deps.logger,
    answer.status >= 500 && errorCode === undefined,
    access,
    answer.status,
    problem,
    errorCode,
  );
  return { ...answer, reachedTelegram: true };
}

/** A paced call with no slot: Telegram's own 429, as REST shows Telegram's errors. */
export function paceRefusal(access: GatewayAccess, pace: PaceResult): CallAnswer | undefined {
  if (pace.kind === 'refused') {
    return {
      ...restTelegramFailure(pacedRefusal(access.method, pace.retryAfter)),
      reachedTelegram: false,
    };
  }
  if (pace.kind === 'aborted') {
    return { status: 503, body: { error: 'the caller went away' }, reachedTelegram: false };
  }
  return undefined;
}

export async function reportTelegram429(
  deps: GatewayRouteDeps,
  access: GatewayAccess,
  pace: Extract<PaceResult, { kind: 'go' }>,
  error: unknown,
): Promise<void> {
  if (error instanceof TelegramError && error.errorCode === 429) {
    await deps.pacing.telegram429(access.bot, pace.plan, error.retryAfter);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
