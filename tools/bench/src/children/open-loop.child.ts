import { Pool } from 'undici';
import type { OpenLoopResult, OpenLoopSpec } from '../harness/load-spec';
import { updateJson, wallClockMs } from '../harness/update-factory';
import { Samples } from '../stats/percentiles';
import { serveChild } from './child-runtime';

/**
 * Open-loop webhook load at a fixed rate, the way Telegram pushes: requests are sent
 * when they are due whether or not earlier ones were answered, spread evenly over
 * each millisecond tick (autocannon's rate limit sends a second's budget in a burst,
 * which would measure its bursts instead of Relaygram). Each update carries its send
 * time so the receiver measures POST-to-receipt latency.
 */
async function run(spec: OpenLoopSpec): Promise<OpenLoopResult> {
  const origin = new URL(spec.url);
  const path = origin.pathname + origin.search;
  const pool = new Pool(origin.origin, {
    connections: spec.maxInFlight,
    pipelining: 1,
    keepAliveTimeout: 60_000,
  });
  const latencies = new Samples(1 << 16);
  const headers = { 'content-type': 'application/json', ...spec.headers };
  const total = Math.round(spec.rate * spec.durationSec);
  let sent = 0;
  let ok = 0;
  let failed = 0;
  let skipped = 0;
  let inFlight = 0;
  const failures: Record<string, number> = {};
  const fail = (what: string) => {
    failed++;
    failures[what] = (failures[what] ?? 0) + 1;
  };
  let nextId = spec.firstId;

  const sendOne = async () => {
    const stamp = wallClockMs();
    const body = updateJson(spec.stream, nextId++, stamp);
    inFlight++;
    sent++;
    try {
      const res = await pool.request({ method: 'POST', path, headers, body });
      await res.body.dump();
      if (res.statusCode >= 200 && res.statusCode < 300) {
        ok++;
        latencies.add(wallClockMs() - stamp);
      } else {
        fail(String(res.statusCode));
      }
    } catch (error) {
      fail((error as { code?: string }).code ?? 'error');
    } finally {
      inFlight--;
    }
  };

  const start = performance.now();
  await new Promise<void>((resolve) => {
    const tick = () => {
      const elapsed = performance.now() - start;
      const due = Math.min(total, Math.floor((elapsed / 1000) * spec.rate));
      while (sent + skipped < due) {
        if (inFlight >= spec.maxInFlight) {
          skipped++;
          nextId++;
          continue;
        }
        void sendOne();
      }
      if (sent + skipped >= total) {
        clearInterval(timer);
        resolve();
      }
    };
    const timer = setInterval(tick, 1);
  });
  const durationMs = performance.now() - start;
  while (inFlight > 0) await new Promise((r) => setTimeout(r, 5));
  await pool.close();
  return {
    sent,
    ok,
    failed,
    skipped,
    failures,
    durationMs,
    latencies: Float64Array.from(latencies.toArray()),
    idsUsed: nextId - spec.firstId,
  };
}

serveChild({ run });
