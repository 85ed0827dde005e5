import { HttpException, HttpStatus } from '@nestjs/common';
import { TelegramError, TelegramNetworkError, TelegramTimeoutError } from '@relaygram/telegram';

/**
 * A failed Bot API call as the gateway answers it (SPEC section 6): Telegram's error as
 * 502 with its code, unreachable 502, timeout 504. The messages hold no token.
 */
export function telegramFailure(error: unknown): unknown {
  if (error instanceof TelegramError) {
    const body: Record<string, unknown> = { error: error.message, error_code: error.errorCode };
    if (error.retryAfter !== undefined) body.retry_after = error.retryAfter;
    return new HttpException(body, HttpStatus.BAD_GATEWAY);
  }
  if (error instanceof TelegramTimeoutError)
    return new HttpException({ error: error.message }, HttpStatus.GATEWAY_TIMEOUT);
  if (error instanceof TelegramNetworkError)
    return new HttpException({ error: error.message }, HttpStatus.BAD_GATEWAY);
  return error;
}
