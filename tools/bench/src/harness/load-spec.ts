import type { UpdateStream } from './update-factory';

/** What a load generator sends: a fresh webhook update per request, or one fixed body. */
export type LoadBody =
  { kind: 'update'; stream: UpdateStream; firstId: number } | { kind: 'fixed'; body: string };

export interface ClosedLoopSpec {
  url: string;
  headers: Record<string, string>;
  body: LoadBody;
  connections: number;
  /** Seconds to run; ignored when `amount` is set. */
  durationSec: number;
  /** Send exactly this many requests instead of running for a duration. */
  amount?: number;
}

export interface LoadResult {
  /** Requests answered 2xx. */
  ok: number;
  non2xx: number;
  errors: number;
  durationMs: number;
  /** 2xx answers per second. */
  rps: number;
  /** Response times of the 2xx answers, ms. */
  latencies: Float64Array;
  statusCodes: Record<string, number>;
  /** update_ids used: the next run of the same stream starts after them. */
  idsUsed: number;
}

export interface OpenLoopSpec {
  url: string;
  headers: Record<string, string>;
  stream: UpdateStream;
  firstId: number;
  /** Requests per second, sent evenly (not in bursts). */
  rate: number;
  durationSec: number;
  /** Requests allowed in flight; a request due when this many are waiting counts as failed. */
  maxInFlight: number;
}

export interface OpenLoopResult {
  sent: number;
  ok: number;
  failed: number;
  /** Due but not sent because maxInFlight requests were already waiting. */
  skipped: number;
  /** Failed requests by HTTP status or error code. */
  failures: Record<string, number>;
  durationMs: number;
  latencies: Float64Array;
  idsUsed: number;
}
