import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import type { RelaygramConfig } from '@relaygram/config';
import type { Update } from '@relaygram/routing';
import {
  auditDeliveries,
  type AcceptedUpdate,
  type AuditResult,
  type DeadLetterSeen,
  type Expectation,
} from '../audit/delivery-audit';
import { sleep } from '../harness/app-process';
import type { Arrival } from '../harness/audited-receiver';
import { HOOK_BOT, POLL_BOT, type ChaosCluster } from '../harness/chaos-cluster';
import { Traffic, type TrafficOptions } from '../harness/traffic';

export interface ScenarioContext {
  cluster: ChaosCluster;
  quick: boolean;
  log: (line: string) => void;
}

/** What a scenario's body reports once its load and its faults are over. */
export interface ScenarioBody {
  /** Dead letters the scenario asks for (route, bot, update → reason). */
  expectDead?: (route: string, bot: string, update: Update) => string | undefined;
  /** Lines for the report; functions are read once the drain is over. */
  notes?: (string | (() => string))[];
  /** How long the audit waits for the drain, from the end of the load. */
  drainDeadlineMs: number;
  /**
   * When the last fault ended (a kill, a restart, the network or receiver back); a
   * function when faults may go on during the drain (a process dying by itself).
   */
  lastFaultAt?: number | (() => number | undefined);
  /** The config the audit matches updates against, when not the one of the start. */
  auditConfig?: RelaygramConfig;
  /** Deliveries optional or not owed (updates accepted around a config reload). */
  expectation?: (route: string, bot: string, update: Update) => Expectation;
  /**
   * The scenario's own checks, run once the drain is over: each returns what went
   * wrong (the scenario fails), or undefined. A fault that did not happen is one: the
   * run would prove nothing.
   */
  checks?: (() => string | undefined | Promise<string | undefined>)[];
  /** Run after the audit, pass or fail. */
  cleanup?: () => void | Promise<void>;
}

export interface ScenarioResult {
  name: string;
  audit: AuditResult;
  /** From the end of the load (and faults) until Telegram had nothing pending and every lane was empty. */
  drainMs: number | undefined;
  /** From the end of the last fault to the same point. */
  sinceFaultMs: number | undefined;
  totalMs: number;
  /** Checks requests failed at the receivers (signature, headers, secrets): the first few. */
  receiverProblems: string[];
  receiverProblemCount: number;
  notes: string[];
  /** What the scenario's own checks found wrong. */
  failures: string[];
  ok: boolean;
}

export interface Scenario {
  name: string;
  /** One line for the report. */
  summary: string;
  traffic?: TrafficOptions;
  /** RELAYGRAM_FAULTS by slot name (`dispatcher-a`...), set before the body runs. */
  faults?: Readonly<Record<string, string>>;
  body(ctx: ScenarioContext, traffic: Traffic): Promise<ScenarioBody>;
}

const POLL_MS = 500;
/** Late duplicates (a killed dispatcher's stalled job re-sent) still count once the lanes are empty. */
const SETTLE_MS = 2_000;

/**
 * Runs one scenario on a running cluster: everything is (re)started, with the config
 * of the start and the RELAYGRAM_FAULTS the scenario asks for, and the receivers forget
 * what they got before; the body loads updates and injects its faults, then everything
 * still down is started again and the run waits until Telegram (the emulator) has
 * nothing pending and Redis has no lane left, or the deadline passes. The audit then
 * compares what was handed over with what the receivers got, and the scenario's own
 * checks run.
 */
export async function runScenario(
  ctx: ScenarioContext,
  scenario: Scenario,
): Promise<ScenarioResult> {
  const { cluster, log } = ctx;
  const started = Date.now();
  const traffic = await readyFor(cluster, scenario, log);
  log(`${scenario.name}: ${scenario.summary}`);
  const body = await scenario.body(ctx, traffic);
  await cluster.ensureRunning();
  const loadEnded = Date.now();
  log(`${scenario.name}: ${traffic.injected.length} updates injected; waiting for the drain`);
  const { drainMs, drainedAt } = await waitForDrain(ctx, scenario.name, loadEnded, body);
  await sleep(SETTLE_MS);

  const deadLetters = await readDeadLetters(cluster);
  const audit = auditDeliveries({
    config: body.auditConfig ?? cluster.config,
    accepted: handedOver(cluster, traffic),
    arrivals: allArrivals(cluster),
    deadLetters,
    expectDead: body.expectDead,
    expectation: body.expectation,
  });
  const failures = await runChecks(body);
  await body.cleanup?.();
  const receiverProblems = [...cluster.receivers.values()].flatMap((r) => r.problems);
  const receiverProblemCount = [...cluster.receivers.values()].reduce(
    (n, r) => n + r.problemCount,
    0,
  );
  await deleteDeadLetters(cluster, deadLetters);
  await saveMetrics(cluster, scenario.name);
  const lastFaultAt =
    typeof body.lastFaultAt === 'function' ? body.lastFaultAt() : body.lastFaultAt;
  const notes = (body.notes ?? []).map((note) => (typeof note === 'string' ? note : note()));
  const notHandedOver = traffic.injected.length - audit.accepted;
  if (notHandedOver > 0) notes.push(`${notHandedOver} updates still pending at Telegram`);
  const ok =
    drainMs !== undefined &&
    audit.lost === 0 &&
    audit.orderViolations === 0 &&
    audit.deadUnexpected === 0 &&
    audit.stray === 0 &&
    audit.doubleAccepted === 0 &&
    notHandedOver === 0 &&
    receiverProblemCount === 0 &&
    failures.length === 0;
  return {
    name: scenario.name,
    audit,
    drainMs,
    sinceFaultMs:
      drainedAt !== undefined && lastFaultAt !== undefined ? drainedAt - lastFaultAt : undefined,
    totalMs: Date.now() - started,
    receiverProblems,
    receiverProblemCount,
    notes,
    failures,
    ok,
  };
}

/**
 * Everything (re)started with the config of the start and the scenario's faults, the
 * receivers' logs emptied, and the traffic the body injects with.
 */
async function readyFor(
  cluster: ChaosCluster,
  scenario: Scenario,
  log: (line: string) => void,
): Promise<Traffic> {
  await cluster.prepare(scenario.faults ?? {}, log);
  await cluster.ensureRunning();
  for (const receiver of cluster.receivers.values()) receiver.resetLog();
  return new Traffic(
    cluster.emulator,
    { hook: cluster.hookBot.id, poll: cluster.pollBot.id },
    scenario.traffic,
  );
}

/** Until Telegram has nothing pending and Redis no lane left, or the body's deadline passes. */
async function waitForDrain(
  { cluster, log }: ScenarioContext,
  name: string,
  loadEnded: number,
  body: ScenarioBody,
): Promise<{ drainMs?: number; drainedAt?: number }> {
  const deadline = loadEnded + body.drainDeadlineMs;
  let lastReport = 0;
  for (;;) {
    const pending = cluster.pendingAtTelegram();
    const lanes = await cluster.lanesLeft();
    if (pending === 0 && lanes === 0) {
      const drainedAt = Date.now();
      return { drainMs: drainedAt - loadEnded, drainedAt };
    }
    if (Date.now() > deadline) return {};
    if (Date.now() - lastReport > 15_000) {
      lastReport = Date.now();
      log(
        `${name}: ${Math.round((Date.now() - loadEnded) / 1000)} s: ` +
          `${pending} pending at Telegram, ${lanes ?? '?'} lanes left`,
      );
    }
    await sleep(POLL_MS);
  }
}

/** The scenario's own checks, one after the other: what each found wrong. */
async function runChecks(body: ScenarioBody): Promise<string[]> {
  const failures: string[] = [];
  for (const check of body.checks ?? []) {
    const failure = await check();
    if (failure !== undefined) failures.push(failure);
  }
  return failures;
}

/** What the emulator no longer holds was handed over: a 2xx webhook answer, or a getUpdates offset past it. */
function handedOver(cluster: ChaosCluster, traffic: Traffic): AcceptedUpdate[] {
  const pending = new Map([
    [
      HOOK_BOT,
      new Set(cluster.emulator.pendingUpdates(cluster.hookBot.id).map((u) => u.update_id)),
    ],
    [
      POLL_BOT,
      new Set(cluster.emulator.pendingUpdates(cluster.pollBot.id).map((u) => u.update_id)),
    ],
  ]);
  return traffic.injected
    .filter((i) => !pending.get(i.bot)?.has(i.update.update_id))
    .map((i) => ({ bot: i.bot, update: i.update }));
}

function allArrivals(cluster: ChaosCluster): Arrival[] {
  return [...cluster.receivers.values()].flatMap((r) => r.arrivals);
}

interface DeadLetterPage {
  items: { delivery_id: string; route: string; bot: string; update_id: number; reason: string }[];
  next_cursor: string | null;
}

/** Through the admin API of an ingress, with the admin token, as an operator would. */
async function readDeadLetters(cluster: ChaosCluster): Promise<DeadLetterSeen[]> {
  const letters: DeadLetterSeen[] = [];
  let cursor: string | null = null;
  const admin = cluster.ingress[0]?.adminUrl;
  do {
    const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const page = (await cluster.getJson(`${admin}/admin/api/dead-letters?limit=500${query}`, {
      authorization: `Bearer ${cluster.adminToken}`,
    })) as DeadLetterPage;
    for (const item of page.items) {
      letters.push({
        deliveryId: item.delivery_id,
        route: item.route,
        bot: item.bot,
        updateId: item.update_id,
        reason: item.reason,
      });
    }
    cursor = page.next_cursor;
  } while (cursor);
  return letters;
}

async function deleteDeadLetters(cluster: ChaosCluster, letters: DeadLetterSeen[]): Promise<void> {
  const admin = cluster.ingress[0]?.adminUrl;
  for (const letter of letters) {
    const res = await request(`${admin}/admin/api/dead-letters/${letter.deliveryId}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${cluster.adminToken}` },
    });
    cluster.record(`DELETE dead letter -> ${res.statusCode} ${await res.body.text()}`);
  }
}

/** /metrics of every app after each scenario: kept with the logs, and grepped for secrets. */
async function saveMetrics(cluster: ChaosCluster, scenario: string): Promise<void> {
  for (const slot of cluster.slots) {
    if (!slot.running) continue;
    try {
      const res = await request(`${slot.adminUrl}/metrics`, { headersTimeout: 10_000 });
      const text = await res.body.text();
      writeFileSync(join(cluster.options.runDir, `metrics-${scenario}-${slot.name}.txt`), text);
    } catch {
      // a slot that went away between the check and the scrape has no metrics to keep
    }
  }
}
