export type SignatureFailureReason =
  | 'missing_header'
  | 'invalid_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  | 'signature_mismatch';

/**
 * Why a signed request was refused. Messages name headers and clock figures only: never
 * the secret, and never the signatures received, so they are safe to log and to return.
 */
export class SignatureVerificationError extends Error {
  override readonly name = 'SignatureVerificationError';
  /** The header at fault, lower-cased. */
  readonly header: string;

  constructor(
    readonly reason: SignatureFailureReason,
    header: string,
    message: string,
  ) {
    super(message);
    this.header = header.toLowerCase();
  }
}
