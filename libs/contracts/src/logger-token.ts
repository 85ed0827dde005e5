/**
 * Injection token of the process's pino logger. It lives here, below every lib, so a
 * shared lib (the queue's Redis connection) can ask for the same logger that the
 * observability module provides, without depending on it.
 */
export const RELAYGRAM_LOGGER = Symbol('RELAYGRAM_LOGGER');
