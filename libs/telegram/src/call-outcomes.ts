import type { CallGuard } from './call-guard';
import { isInteger, isObject, MAX_ANSWER_BYTES, parseRawAnswer } from './answer-body';
import { errorCodeOf, networkReason } from './network-failure';
import { redactToken } from './redact-token';
import type { RequestBodyFailure } from './request-body';
import {
  TelegramAbortError,
  TelegramError,
  TelegramNetworkError,
  TelegramRequestError,
  TelegramTimeoutError,
} from './telegram.errors';
import { CALL_ABORTED, CALL_NETWORK_ERROR, CALL_TIMEOUT } from './telegram.types';

const MAX_DESCRIPTION_CHARS = 1024;

/**
 * What came back from a call, turned into its result or one of this lib's own errors,
 * built from safe fields only: the token (and its secret half) is scrubbed from any text
 * that came from outside, and undici's errors are reduced to a code and host:port.
 */
export class CallOutcomes {
  // Private fields, not TS `private`: nothing that inspects the object can reach the token.
  readonly #hostPort: string;
  readonly #secrets: readonly string[];

  constructor(hostPort: string, secrets: readonly string[]) {
    this.#hostPort = hostPort;
    this.#secrets = secrets;
  }

  answerResult<T>(method: string, statusCode: number, text: string | undefined): T {
    const answer = parseRawAnswer(text);
    if (!answer) {
      throw new TelegramNetworkError({
        method,
        code: 'EBADANSWER',
        reason:
          text === undefined
            ? `HTTP ${statusCode} answer from ${this.#hostPort} is larger than ${MAX_ANSWER_BYTES} bytes`
            : `HTTP ${statusCode} answer from ${this.#hostPort} is not Bot API JSON`,
        statusCode,
      });
    }
    if (answer.ok) return answer.result as T;
    const parameters = isObject(answer.parameters) ? answer.parameters : {};
    throw new TelegramError({
      method,
      httpStatus: statusCode,
      errorCode: isInteger(answer.error_code) ? answer.error_code : statusCode,
      description:
        typeof answer.description === 'string'
          ? this.scrub(answer.description).slice(0, MAX_DESCRIPTION_CHARS)
          : `HTTP ${statusCode}`,
      retryAfter: isInteger(parameters.retry_after) ? parameters.retry_after : undefined,
      migrateToChatId: isInteger(parameters.migrate_to_chat_id)
        ? parameters.migrate_to_chat_id
        : undefined,
    });
  }

  /**
   * `guard` is the call's own timer and signal when it has them; without one, undici's
   * headers and body timeouts (`timeoutMs`) kept the deadline.
   */
  failure(
    method: string,
    error: unknown,
    timeoutMs: number,
    guard: CallGuard | undefined,
    bodyFailure: RequestBodyFailure | undefined,
  ): Error {
    // Only this class creates these two, from Telegram's answer: pass them on.
    if (error instanceof TelegramError || error instanceof TelegramNetworkError) return error;
    if (error instanceof TelegramRequestError || error instanceof TelegramAbortError) return error;
    if (guard?.timedOut) return new TelegramTimeoutError({ method, timeoutMs });
    if (guard?.aborted) return new TelegramAbortError({ method });
    if (bodyFailure) {
      return new TelegramNetworkError({
        method,
        code: bodyFailure.code,
        reason: this.scrub(bodyFailure.reason),
      });
    }
    const code = errorCodeOf(error) ?? 'EUNKNOWN';
    if (code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT') {
      return new TelegramTimeoutError({ method, timeoutMs });
    }
    return new TelegramNetworkError({ method, code, reason: networkReason(code, this.#hostPort) });
  }

  /** Defence in depth for text that came from outside (an odd proxy could echo the path). */
  scrub(text: string): string {
    let clean = redactToken(text);
    for (const secret of this.#secrets) clean = clean.split(secret).join('***');
    return clean;
  }
}

/** The code a call event reports for a failure. */
export function eventCode(error: Error): number {
  if (error instanceof TelegramError) return error.errorCode;
  if (error instanceof TelegramTimeoutError) return CALL_TIMEOUT;
  if (error instanceof TelegramAbortError) return CALL_ABORTED;
  return CALL_NETWORK_ERROR;
}
