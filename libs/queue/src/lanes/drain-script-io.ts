import type { RedisKeys } from '@relaygram/contracts';
import { ROUTE } from '../scripts/engine.lua';
import { text, type ScriptPrefix } from '../scripts/script-layout';
import { decodeEntry, type DeliveryEntry } from './delivery-entry';

export { text };

/**
 * How TypeScript talks to the engine's route scripts (scripts/engine.lua.ts): the
 * leading KEYS and ARGV every one of them takes, and the parts of their replies.
 */

/** The route's KEYS and ARGV, which every route script's own follow. */
export function routePrefix(keys: RedisKeys, route: string, now: number): ScriptPrefix {
  return ROUTE.prefix({
    lanes: keys.routeLanes(route),
    ready: keys.readyLanes(route),
    delayed: keys.delayedLanes(route),
    drains: keys.drainJobs(route),
    drain: keys.drainState(route),
    idle: keys.idleJobs(route),
    stats: keys.routeStats(route),
    seq: keys.laneSeq,
    dispatchers: keys.dispatchers,
    lanePrefix: keys.lane(''),
    statePrefix: keys.laneState(''),
    inboxPrefix: keys.inbox(''),
    now: Math.trunc(now),
    route,
  });
}

/** KEYS[1..9] of a route script. */
export function routeScriptKeys(keys: RedisKeys, route: string): string[] {
  return routePrefix(keys, route, 0).keys;
}

/** ARGV[1..5] of a route script. */
export function routeScriptArgs(keys: RedisKeys, route: string, now: number): (string | number)[] {
  return routePrefix(keys, route, now).args as (string | number)[];
}

/** The head of a lane with its attempt state; `attempt` counts this attempt (1 = first). */
export interface LaneHead {
  entry: DeliveryEntry;
  attempt: number;
  consecutive5xx: number;
  /** What the previous attempt got, when it was retried. */
  lastStatus?: number;
  lastBody?: string;
  lastError?: string;
}

/** A head a drain job has begun, with the lane and generation that fence it. */
export interface ClaimedHead extends LaneHead {
  lane: string;
  gen: number;
}

/**
 * What a drain job does next: send a head it now holds, wait for a hand-off, or end.
 * `stale`: the job's lock or the lane's generation moved on; the job must stop and
 * change nothing.
 */
export type DrainStep =
  | { kind: 'stale' }
  /** Waiting for a hand-off; `until`: when the earliest backing-off lane comes due (ms). */
  | { kind: 'idle'; until?: number }
  | { kind: 'end' }
  | ({ kind: 'head' } & ClaimedHead);

/** A drain job the script armed: the caller adds it to the route's BullMQ queue. */
export interface ArmedJob {
  route: string;
  jobId: string;
}

/** A job to add delayed until `at` (ms): a backing-off lane comes due then. */
export interface WakeJob extends ArmedJob {
  at: number;
}

/** BullMQ jobs a script asks its caller to add. */
export interface DrainJobsToAdd {
  arms: ArmedJob[];
  wakes: WakeJob[];
}

function optionalText(value: unknown): string | undefined {
  return value === null || value === undefined ? undefined : text(value);
}

/** Fields lane, gen, entry, attempts, c5xx, last status, last body, last error. */
export function parseHead(fields: readonly unknown[]): ClaimedHead {
  const raw = fields[2];
  const head: ClaimedHead = {
    lane: text(fields[0]),
    gen: Number(text(fields[1])),
    entry: decodeEntry(Buffer.isBuffer(raw) ? raw : Buffer.from(String(raw))),
    attempt: Number(text(fields[3])),
    consecutive5xx: Number(text(fields[4] ?? '0')),
  };
  const lastStatus = optionalText(fields[5]);
  if (lastStatus !== undefined && lastStatus !== '') head.lastStatus = Number(lastStatus);
  const lastBody = optionalText(fields[6]);
  if (lastBody) head.lastBody = lastBody;
  const lastError = optionalText(fields[7]);
  if (lastError) head.lastError = lastError;
  return head;
}

export function parseStep(step: readonly unknown[]): DrainStep {
  const kind = text(step[0]);
  switch (kind) {
    case 'head':
      return { kind: 'head', ...parseHead(step.slice(1)) };
    case 'idle':
      return step[1] === undefined || step[1] === null
        ? { kind }
        : { kind, until: Number(text(step[1])) };
    case 'end':
    case 'stale':
      return { kind };
    default:
      throw new Error(`unexpected drain step from Redis: ${kind}`);
  }
}

export interface DrainResult {
  step: DrainStep;
  /** Drain jobs the caller adds to BullMQ (a crash before that is repaired by the reconciler). */
  jobs: DrainJobsToAdd;
}

/** The reply of a script that moves a drain job (start, finish, retire): {step, arms, wakes}. */
export function parseDrainResult(reply: unknown): DrainResult {
  const parts = reply as unknown[];
  return { step: parseStep(parts[0] as unknown[]), jobs: parseJobsToAdd(parts) };
}

/** The outcome's name a route script gives as its step: {{outcome}, arms, wakes}. */
export function parseOutcome(reply: unknown): string {
  return text(((reply as unknown[])[0] as unknown[])[0]);
}

/** Drain jobs a script armed: route, job id pairs. */
export function parseArms(list: unknown): ArmedJob[] {
  const arms: ArmedJob[] = [];
  const a = (list ?? []) as unknown[];
  for (let i = 0; i + 1 < a.length; i += 2) arms.push({ route: text(a[i]), jobId: text(a[i + 1]) });
  return arms;
}

/** The arms and wakes of a route script's reply ({step, arms, wakes}). */
export function parseJobsToAdd(reply: readonly unknown[]): DrainJobsToAdd {
  const arms = parseArms(reply[1]);
  const wakes: WakeJob[] = [];
  const w = (reply[2] ?? []) as unknown[];
  for (let i = 0; i + 2 < w.length; i += 3) {
    wakes.push({ route: text(w[i]), jobId: text(w[i + 1]), at: Number(text(w[i + 2])) });
  }
  return { arms, wakes };
}

/**
 * A hand-off as the scripts publish it on a dispatcher's channel: job, lane, gen, attempts,
 * c5xx, last status, last error length, last body length (newline-separated), then the
 * last error, the last body and the entry's bytes.
 */
export interface HandOff {
  jobId: string;
  head: ClaimedHead;
}

export function decodeHandOff(message: Buffer): HandOff {
  const fields: string[] = [];
  let at = 0;
  for (let i = 0; i < 8; i++) {
    const newline = message.indexOf(0x0a, at);
    if (newline < 0) throw new Error('corrupt hand-off: too few fields');
    fields.push(message.subarray(at, newline).toString('utf8'));
    at = newline + 1;
  }
  const errorLength = Number(fields[6]);
  const bodyLength = Number(fields[7]);
  const lastError = message.subarray(at, at + errorLength).toString('utf8');
  const lastBody = message
    .subarray(at + errorLength, at + errorLength + bodyLength)
    .toString('utf8');
  const entry = message.subarray(at + errorLength + bodyLength);
  return {
    jobId: fields[0],
    head: parseHead([
      fields[1],
      fields[2],
      entry,
      fields[3],
      fields[4],
      fields[5] === '' ? undefined : fields[5],
      lastBody,
      lastError,
    ]),
  };
}
