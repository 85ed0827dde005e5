const CODE_NAME = /^[A-Z][A-Z0-9_]{1,63}$/;

// Readable words for the codes an operator meets most; the code itself always leads.
const PHRASES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed while sending',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'DNS lookup failed',
  UND_ERR_SOCKET: 'connection closed by the other side',
  UND_ERR_CONNECT_TIMEOUT: 'connect timeout',
  UND_ERR_HEADERS_TIMEOUT: 'headers timeout',
  UND_ERR_BODY_TIMEOUT: 'body timeout',
  UND_ERR_CLOSED: 'client closed',
  UND_ERR_DESTROYED: 'client destroyed',
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: 'answer shorter or longer than its Content-Length',
  UND_ERR_REQ_CONTENT_LENGTH_MISMATCH: 'request body length differs from its Content-Length',
  UND_ERR_INFO: 'connection closed',
  CERT_HAS_EXPIRED: 'TLS certificate expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed TLS certificate',
  SELF_SIGNED_CERT_IN_CHAIN: 'self-signed TLS certificate in chain',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate not trusted',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS certificate does not match the host',
};

/**
 * The code name of an error (ECONNREFUSED, UND_ERR_SOCKET...), looking into the
 * first error of an AggregateError (happy eyeballs tries several addresses). Only a
 * value shaped like a code name is returned: it is the one part of a foreign error
 * that goes into our messages.
 */
export function errorCodeOf(error: unknown): string | undefined {
  for (let current = error, depth = 0; depth < 4; depth++) {
    if (typeof current !== 'object' || current === null) return undefined;
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && CODE_NAME.test(code)) return code;
    const inner = (current as { errors?: unknown }).errors;
    if (!Array.isArray(inner) || inner.length === 0) return undefined;
    current = inner[0];
  }
  return undefined;
}

/** `ECONNREFUSED 127.0.0.1:8081 (connection refused)`: built from safe parts only. */
export function networkReason(code: string, hostPort: string): string {
  const phrase = PHRASES[code];
  return phrase ? `${code} ${hostPort} (${phrase})` : `${code} ${hostPort}`;
}
