import type { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { readWhole, type BufferedResponse, type StreamedResponse } from '@relaygram/telegram';
import { redirectsMethod } from '../access/method-rules';
import { accessOf } from '../access/request-access';
import { logCall } from '../http/call-log';
import { callerSignal } from '../http/caller-signal';
import { sendAnswer } from '../http/http-answer';
import type { GatewayRouteDeps } from '../http/route-deps';
import { dropInTelegramFailure, type DropInAnswer } from '../telegram/telegram-error.mapper';
import type { UploadGate } from '../uploads/upload-gate';
import { errorMessage } from '@relaygram/contracts';
import {
  GONE,
  MALFORMED_MULTIPART,
  METHOD_PARAMETER,
  TOO_LARGE,
  tooManyRequests,
} from './drop-in-answers';
import { NO_PARAMS } from './drop-in-body';
import { MultipartScanError, type MultipartNameScanner } from './multipart-name-scanner';

/** Answers up to this size are read whole before they are sent on (files stream). */
export const MAX_BUFFERED_ANSWER = 256 * 1024;

/** Telegram's answer to a relayed call: read whole by the client when small. */
export type RelayedAnswer = StreamedResponse | BufferedResponse;

/** The upload a relayed call streams: its gate, and its body to drop if refused. */
export interface RelayedUpload {
  openGate(): UploadGate;
  body: Readable;
}

/**
 * Takes the call's slot, then relays it. No slot within max_wait: Telegram's own 429,
 * without calling it. Telegram's own 429 (passed through as always) pauses what it hit
 * for every replica. The upload gate, when there is one, opens only once the call may go.
 */
export async function pacedRelay(
  deps: GatewayRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  params: Readonly<Record<string, unknown>>,
  exchange: (gate?: UploadGate) => Promise<RelayedAnswer>,
  upload?: RelayedUpload,
): Promise<FastifyReply> {
  const access = accessOf(request);
  const pace =
    params === NO_PARAMS
      ? undefined
      : await deps.pacing.pace(access.bot, access.method, params, callerSignal(reply));
  if (pace?.kind === 'refused' || pace?.kind === 'aborted') {
    // What the client still sends is read and dropped, so it gets the answer.
    upload?.body.resume();
    return refuse(
      deps,
      request,
      reply,
      pace.kind === 'refused' ? tooManyRequests(pace.retryAfter) : GONE,
    );
  }
  const gate = upload?.openGate();
  const on429 =
    pace?.kind === 'go'
      ? (retryAfter: number | undefined) =>
          deps.pacing.telegram429(access.bot, pace.plan, retryAfter)
      : undefined;
  return relay(deps, request, reply, () => exchange(gate), gate, on429);
}

/** Sends Telegram's answer on as it is: status, content headers, body stream. */
export async function relay(
  deps: GatewayRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  exchange: () => Promise<RelayedAnswer>,
  gate?: UploadGate,
  on429?: (retryAfter: number | undefined) => Promise<void>,
): Promise<FastifyReply> {
  let answer: RelayedAnswer;
  try {
    answer = await exchange();
  } catch (error) {
    return refuseFailedExchange(deps, request, reply, error, gate);
  }
  // Telegram answered before the body ended (it refused early): drop the rest.
  if (gate && !gate.sourceEnded) gate.refuse();
  let body: Readable | Buffer = answer.body;
  // A 429 is read whole whatever its length header says: its retry_after sets the pause.
  // Bot API answers are small and come read whole (bufferUpTo): sent as one buffer they
  // cost less than a piped stream, and a connection lost mid-answer still gets a 502.
  const tooMany = on429 !== undefined && answer.statusCode === 429;
  if (!Buffer.isBuffer(body) && (isSmall(answer) || tooMany)) {
    try {
      body = await readAll(body);
    } catch (error) {
      return failed(deps, request, reply, error);
    }
  }
  if (tooMany && Buffer.isBuffer(body)) await on429(retryAfterOf(body));
  logDropInCall(deps, request, answer.statusCode);
  reply.code(answer.statusCode).headers(answer.headers);
  return reply.send(body);
}

/** The upload's own refusal (a method field, a malformed body, too large) comes first. */
function refuseFailedExchange(
  deps: GatewayRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  error: unknown,
  gate: UploadGate | undefined,
): FastifyReply {
  gate?.refuse();
  const refusal = gate?.refusal;
  if (refusal instanceof MethodFieldError) return refuse(deps, request, reply, METHOD_PARAMETER);
  if (refusal instanceof MultipartScanError) {
    return refuse(deps, request, reply, MALFORMED_MULTIPART);
  }
  if (gate?.tooLarge) return refuse(deps, request, reply, TOO_LARGE);
  return failed(deps, request, reply, error);
}

function failed(
  deps: GatewayRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  error: unknown,
): FastifyReply {
  const failure = dropInTelegramFailure(error);
  logDropInCall(deps, request, failure.status, errorMessage(error));
  return sendAnswer(reply, failure);
}

function retryAfterOf(body: Buffer): number | undefined {
  try {
    const value = JSON.parse(body.toString('utf8')) as {
      parameters?: { retry_after?: unknown };
    };
    const retryAfter = value.parameters?.retry_after;
    return typeof retryAfter === 'number' && retryAfter > 0 ? retryAfter : undefined;
  } catch {
    return undefined;
  }
}

function isSmall(answer: RelayedAnswer): boolean {
  const length = Number(answer.headers['content-length']);
  return Number.isSafeInteger(length) && length <= MAX_BUFFERED_ANSWER;
}

async function readAll(stream: Readable): Promise<Buffer> {
  return (await readWhole(stream, Infinity)) as Buffer;
}

class MethodFieldError extends Error {
  override readonly name = 'MethodFieldError';
}

/** The upload gate's check of each chunk: no part may name another method. */
export function inspectMultipart(
  scanner: MultipartNameScanner,
  chunk: Buffer,
  pathMethod: string,
): Error | undefined {
  try {
    for (const part of scanner.push(chunk)) {
      if (part.value !== undefined && redirectsMethod(part.value, pathMethod)) {
        return new MethodFieldError('method field');
      }
    }
    return undefined;
  } catch (error) {
    return error instanceof Error ? error : new MultipartScanError('unreadable multipart body');
  }
}

export function refuse(
  deps: GatewayRouteDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  answer: DropInAnswer,
): FastifyReply {
  logDropInCall(deps, request, answer.status, answer.body.description);
  return sendAnswer(reply, answer);
}

export function logDropInCall(
  deps: GatewayRouteDeps,
  request: FastifyRequest,
  status: number,
  problem?: string,
): void {
  logCall(deps.logger, status >= 500, accessOf(request), status, problem);
}
