/**
 * A signing secret that cannot be used. The message describes the problem without
 * quoting any part of the value, so it can go straight into a config error line.
 */
export class InvalidSigningSecretError extends Error {
  override readonly name = 'InvalidSigningSecretError';
}
