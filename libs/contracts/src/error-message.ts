/**
 * The message of anything thrown. A `catch` binds `unknown`; this is the one place that
 * decides how a non-Error value reads, so log lines and answers agree across the tree.
 * Log the error itself (pino's `{ err }`) where its stack matters; use this for text.
 */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    return String(error);
  } catch {
    return 'unknown error';
  }
}
