import type { RelaygramConfig } from '@relaygram/config';
import { laneId } from '@relaygram/contracts';
import { laneKeyFor, selectRoutes, type Update } from '@relaygram/routing';
import type { Arrival } from '../harness/audited-receiver';

/** An update the emulator handed over: answered 2xx on the webhook, or passed by a getUpdates offset. */
export interface AcceptedUpdate {
  bot: string;
  update: Update;
}

export interface DeadLetterSeen {
  deliveryId: string;
  route: string;
  bot: string;
  updateId: number;
  reason: string;
}

/**
 * What an accepted update owes a route its rules match: `required` (the default), or,
 * for an update accepted while the config changed, `optional` (the ingress that took
 * it may have run either config: if it arrives, it counts for order and duplicates,
 * if not, it is not lost) or `none` (accepted while no config had the route: an
 * arrival is stray).
 */
export type Expectation = 'required' | 'optional' | 'none';

export interface AuditInput {
  config: RelaygramConfig;
  /**
   * Every update handed over, in acceptance order per lane. For a polling bot that is
   * getUpdates order; for a webhook bot, one chat's updates go out one at a time, so it
   * is update_id order within a chat. The scenarios keep updates whose acceptance order
   * is not known from outside (two chats of a webhook bot in one strict lane) out of the
   * routes that would need it.
   */
  accepted: readonly AcceptedUpdate[];
  arrivals: readonly Arrival[];
  deadLetters: readonly DeadLetterSeen[];
  /** The dead letters the scenario asked for: the reason expected, or undefined. */
  expectDead?: (route: string, bot: string, update: Update) => string | undefined;
  /** Per matching route and update; every delivery is `required` without it. */
  expectation?: (route: string, bot: string, update: Update) => Expectation;
}

export interface AuditResult {
  accepted: number;
  /** Required deliveries. */
  expected: number;
  /** Required deliveries answered 2xx. */
  delivered: number;
  /** Optional deliveries (see Expectation), and how many of them were answered 2xx. */
  optional: number;
  optionalDelivered: number;
  duplicates: number;
  lost: number;
  orderViolations: number;
  /** Dead letters the scenario asked for, found. */
  deadAsked: number;
  /** Dead letters nobody asked for, or asked-for ones that never went dead. */
  deadUnexpected: number;
  /** Requests for an update of this run that no route of it should have got. */
  stray: number;
  /** Requests delivered with two different delivery ids for one (route, bot, update): dedup failed. */
  doubleAccepted: number;
  /** First few findings, in words. */
  findings: string[];
}

interface Expected {
  key: string;
  route: string;
  bot: string;
  updateId: number;
  lane: string | undefined;
  /** Position in acceptance order within the lane. */
  order: number;
  deadReason: string | undefined;
  optional: boolean;
}

interface Seen {
  firstSeq: number;
  ok: number;
  deliveryIds: Set<string>;
}

const MAX_FINDINGS = 12;

export function deliveryKey(route: string, bot: string, updateId: number): string {
  return `${route}|${bot}|${updateId}`;
}

/**
 * Compares what was handed over with what every receiver got:
 * - expected: one delivery per (update, matching route), from `selectRoutes` on the config,
 *   unless `expectation` makes it optional or not owed at all;
 * - delivered: expected deliveries answered 2xx at least once; every further 2xx is a duplicate;
 * - lost: expected, never answered 2xx, and not a dead letter (an optional one is never lost);
 * - lane order: in each lane (route + bot + chat/user, or route + bot for `strict`;
 *   `none` has none) the first arrivals of the deliveries that did not go dead must
 *   come in acceptance order.
 */
export function auditDeliveries(input: AuditInput): AuditResult {
  const findings: string[] = [];
  const find: Find = (text) => {
    if (findings.length < MAX_FINDINGS) findings.push(text);
  };
  const dead = new Map(input.deadLetters.map((d) => [deliveryKey(d.route, d.bot, d.updateId), d]));
  const owed = expectedDeliveries(input);
  const { seen, stray } = tallyArrivals(input, owed, find);
  const outcomes = countOutcomes(owed, seen, dead, find);
  const orderViolations = countOrderViolations(owed.lanes, seen, dead, find);
  return {
    accepted: input.accepted.length,
    expected: owed.expected.size - outcomes.optional,
    delivered: outcomes.delivered,
    optional: outcomes.optional,
    optionalDelivered: outcomes.optionalDelivered,
    duplicates: outcomes.duplicates,
    lost: outcomes.lost,
    orderViolations,
    deadAsked: outcomes.deadAsked,
    deadUnexpected: outcomes.deadUnexpected,
    stray,
    doubleAccepted: outcomes.doubleAccepted,
    findings,
  };
}

type Find = (text: string) => void;

/** What the run owes: each delivery by key, the lanes in acceptance order, and the run's updates. */
interface Owed {
  expected: Map<string, Expected>;
  lanes: Map<string, Expected[]>;
  /** `bot|update_id` of every update of this run. */
  updatesOfRun: Set<string>;
}

function expectedDeliveries(input: AuditInput): Owed {
  const expected = new Map<string, Expected>();
  const lanes = new Map<string, Expected[]>();
  const updatesOfRun = new Set<string>();
  const ordered = [...input.accepted].sort(
    (a, b) => a.bot.localeCompare(b.bot) || a.update.update_id - b.update.update_id,
  );
  for (const { bot, update } of ordered) {
    updatesOfRun.add(`${bot}|${update.update_id}`);
    for (const route of selectRoutes(input.config, bot, update)) {
      const owed = input.expectation?.(route.name, bot, update) ?? 'required';
      if (owed === 'none') continue;
      const key = deliveryKey(route.name, bot, update.update_id);
      const laneKey = laneKeyFor(route.ordering, update, key);
      const lane = laneKey.kind === 'single' ? undefined : laneId(route.name, bot, laneKey);
      const entry: Expected = {
        key,
        route: route.name,
        bot,
        updateId: update.update_id,
        lane,
        order: 0,
        deadReason: input.expectDead?.(route.name, bot, update),
        optional: owed === 'optional',
      };
      expected.set(key, entry);
      if (lane !== undefined) {
        const list = lanes.get(lane) ?? [];
        entry.order = list.length;
        list.push(entry);
        lanes.set(lane, list);
      }
    }
  }
  return { expected, lanes, updatesOfRun };
}

/** The arrivals of each owed delivery; an update of this run at a route it does not match is stray. */
function tallyArrivals(
  input: AuditInput,
  { expected, updatesOfRun }: Owed,
  find: Find,
): { seen: Map<string, Seen>; stray: number } {
  const routes = new Map(input.config.routes.map((r) => [r.name, r]));
  const seen = new Map<string, Seen>();
  let stray = 0;
  for (const arrival of input.arrivals) {
    const key = deliveryKey(arrival.route, arrival.bot, arrival.updateId);
    if (!expected.has(key)) {
      // Arrivals of earlier runs (late duplicates) are not this audit's business; an
      // update of this run reaching a route that should not get it is.
      if (updatesOfRun.has(`${arrival.bot}|${arrival.updateId}`) && routes.has(arrival.route)) {
        stray++;
        find(`stray: ${key} reached a route it does not match`);
      }
      continue;
    }
    let s = seen.get(key);
    if (!s) {
      s = { firstSeq: arrival.seq, ok: 0, deliveryIds: new Set() };
      seen.set(key, s);
    }
    s.firstSeq = Math.min(s.firstSeq, arrival.seq);
    s.deliveryIds.add(arrival.deliveryId);
    if (arrival.status >= 200 && arrival.status < 300) s.ok++;
  }
  return { seen, stray };
}

/** Delivered, duplicated, lost and dead, delivery by delivery, with what went wrong in words. */
function countOutcomes(
  { expected, updatesOfRun }: Owed,
  seen: Map<string, Seen>,
  dead: Map<string, DeadLetterSeen>,
  find: Find,
) {
  let delivered = 0;
  let optional = 0;
  let optionalDelivered = 0;
  let duplicates = 0;
  let lost = 0;
  let deadAsked = 0;
  let deadUnexpected = 0;
  let doubleAccepted = 0;
  for (const entry of expected.values()) {
    const s = seen.get(entry.key);
    const letter = dead.get(entry.key);
    if (entry.optional) optional++;
    if (s && s.ok > 0) {
      if (entry.optional) optionalDelivered++;
      else delivered++;
      duplicates += s.ok - 1;
    }
    if (s && s.deliveryIds.size > 1) {
      doubleAccepted++;
      find(`double accepted: ${entry.key} came with ${s.deliveryIds.size} delivery ids`);
    }
    if (letter) {
      if (entry.deadReason !== undefined && letter.reason === entry.deadReason) deadAsked++;
      else {
        deadUnexpected++;
        find(`dead letter nobody asked for: ${entry.key} (${letter.reason})`);
      }
    } else if (entry.deadReason !== undefined) {
      deadUnexpected++;
      find(`expected a ${entry.deadReason} dead letter for ${entry.key}; there is none`);
    }
    if ((!s || s.ok === 0) && !letter && !entry.optional) {
      lost++;
      find(`lost: ${entry.key}${s ? ' (arrived, never answered 2xx)' : ' (never arrived)'}`);
    }
  }
  for (const [key, letter] of dead) {
    if (!expected.has(key) && updatesOfRun.has(`${letter.bot}|${letter.updateId}`)) {
      deadUnexpected++;
      find(`dead letter for a delivery nobody expected: ${key} (${letter.reason})`);
    }
  }
  return {
    delivered,
    optional,
    optionalDelivered,
    duplicates,
    lost,
    deadAsked,
    deadUnexpected,
    doubleAccepted,
  };
}

/** In each lane, first arrivals of the deliveries that did not go dead must follow acceptance order. */
function countOrderViolations(
  lanes: Map<string, Expected[]>,
  seen: Map<string, Seen>,
  dead: Map<string, DeadLetterSeen>,
  find: Find,
): number {
  let orderViolations = 0;
  for (const [lane, list] of lanes) {
    let latest = -Infinity;
    let latestKey = '';
    for (const entry of list) {
      if (dead.has(entry.key)) continue;
      const s = seen.get(entry.key);
      if (!s) continue;
      if (s.firstSeq < latest) {
        orderViolations++;
        find(`lane ${lane}: ${entry.key} first arrived before ${latestKey}, accepted earlier`);
      } else {
        latest = s.firstSeq;
        latestKey = entry.key;
      }
    }
  }
  return orderViolations;
}
