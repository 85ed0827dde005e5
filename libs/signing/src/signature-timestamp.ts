import { SignatureVerificationError } from './signature-verification.error';

/** Receivers accept a signature made up to this long before or after their own clock. */
export const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

export interface VerifyOptions {
  /** Allowed clock difference in either direction, in seconds. Default 300. */
  readonly toleranceSeconds?: number;
  /** The receiver's current time in unix seconds (not milliseconds). Default: the clock. */
  readonly now?: number;
}

export function currentUnixSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** The timestamp a signature is made with: whole unix seconds, as it goes on the wire. */
export function signingTimestamp(timestampSeconds: number | undefined): number {
  if (timestampSeconds === undefined) return currentUnixSeconds();
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new RangeError('timestampSeconds must be a non-negative integer (unix seconds)');
  }
  return timestampSeconds;
}

export function toleranceOf(options: VerifyOptions | undefined): number {
  const tolerance = options?.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (!Number.isFinite(tolerance) || tolerance < 0) {
    throw new RangeError('toleranceSeconds must be a non-negative number');
  }
  return tolerance;
}

function nowOf(options: VerifyOptions | undefined): number {
  const now = options?.now;
  if (now === undefined) return currentUnixSeconds();
  if (!Number.isFinite(now)) throw new RangeError('now must be a finite number of unix seconds');
  return Math.floor(now);
}

// Digits only: parseInt-style leniency ("12abc", " 12", "1e3") would let two different
// header strings stand for one signed value. Sixteen digits is well past any real clock.
const TIMESTAMP_PATTERN = /^\d{1,16}$/;

/**
 * Parses a timestamp header and checks it against the receiver's clock. The window is
 * inclusive at both ends, as in the Standard Webhooks reference libraries.
 */
export function checkTimestamp(
  header: string,
  value: string,
  tolerance: number,
  options: VerifyOptions | undefined,
): number {
  if (!TIMESTAMP_PATTERN.test(value)) {
    throw new SignatureVerificationError(
      'invalid_timestamp',
      header,
      `${header} is not an integer unix timestamp in seconds`,
    );
  }
  const timestamp = Number(value);
  const age = nowOf(options) - timestamp;
  if (age > tolerance) {
    throw new SignatureVerificationError(
      'timestamp_too_old',
      header,
      `${header} is ${age} s in the past, beyond the ${tolerance} s tolerance`,
    );
  }
  if (-age > tolerance) {
    throw new SignatureVerificationError(
      'timestamp_too_new',
      header,
      `${header} is ${-age} s in the future, beyond the ${tolerance} s tolerance`,
    );
  }
  return timestamp;
}
