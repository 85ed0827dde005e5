import type { AccessDenial } from '../access/access-check';
import { tooManyRequestsDescription } from '../pacing/gateway-pacing.service';
import { dropInError, type DropInAnswer } from '../telegram/telegram-error.mapper';

export const UNAUTHORIZED = dropInError(401, 'Unauthorized');
export const NOT_FOUND = dropInError(404, 'Not Found');
const RESERVED = dropInError(403, 'Forbidden: reserved by the gateway');
export const TEST_ENVIRONMENT = dropInError(
  403,
  'Forbidden: the test environment is not served by this gateway',
);
export const METHOD_PARAMETER = dropInError(
  400,
  'Bad Request: parameter "method" may only repeat the method in the path',
);
export const BAD_JSON = dropInError(400, "Bad Request: can't parse JSON object");
export const AMBIGUOUS_BODY = dropInError(400, 'Bad Request: unsupported Content-Type');
export const MALFORMED_MULTIPART = dropInError(400, 'Bad Request: malformed multipart body');
export const GONE = dropInError(503, 'Service Unavailable');
export const TOO_LARGE = dropInError(413, 'Request Entity Too Large');
export const INTERNAL_ERROR = dropInError(500, 'Internal Server Error');

export function denialAnswer(denial: AccessDenial): DropInAnswer {
  switch (denial.reason) {
    case 'bot-forbidden':
      return dropInError(403, 'Forbidden: this client may not use this bot');
    case 'invalid-method':
      return NOT_FOUND;
    case 'reserved-method':
      return RESERVED;
    case 'method-forbidden':
      return dropInError(403, `Forbidden: this client may not call ${denial.method}`);
    default:
      return UNAUTHORIZED;
  }
}

export function tooManyRequests(retryAfter: number): DropInAnswer {
  return {
    status: 429,
    body: {
      ok: false,
      error_code: 429,
      description: tooManyRequestsDescription(retryAfter),
      parameters: { retry_after: retryAfter },
    },
  };
}
