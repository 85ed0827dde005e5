import { RecordingReceiver } from '@relaygram/testing';
import { stampOf, wallClockMs } from '../harness/update-factory';
import { Samples } from '../stats/percentiles';
import { serveChild } from './child-runtime';

/**
 * The webhook target: libs/testing's RecordingReceiver answering 204, in a process of
 * its own. `count` mode only counts (what a dispatcher benchmark needs: first and last
 * arrival); `latency` mode also reads the send time stamped into each update's text.
 */
let receiver: RecordingReceiver | undefined;
const latencies = new Samples(1 << 16);
let counted = 0;
let firstAt: number | undefined;
let lastAt: number | undefined;
let sweeper: NodeJS.Timeout | undefined;

async function start({ mode }: { mode: 'count' | 'latency' }): Promise<{ url: string }> {
  receiver = await RecordingReceiver.start({ record: mode === 'latency' });
  if (mode === 'latency') {
    const rx = receiver;
    rx.respondWith((delivery) => {
      const now = wallClockMs();
      counted++;
      const stamp = stampOf(delivery.body.toString('latin1'));
      if (stamp !== undefined) latencies.add(now - stamp);
      return { status: 204 };
    });
    // Recorded deliveries are not needed once measured; keep the process's memory flat.
    sweeper = setInterval(() => {
      rx.deliveries.length = 0;
    }, 100);
  }
  return { url: receiver.url };
}

function requireReceiver(): RecordingReceiver {
  if (!receiver) throw new Error('receiver not started');
  return receiver;
}

/**
 * Resolves once `count` requests arrived in total, with the first and last arrival
 * times; or when nothing arrived for `stallMs`, or at `timeoutMs`, with what came.
 */
async function expect({
  count,
  timeoutMs,
  stallMs = timeoutMs,
}: {
  count: number;
  timeoutMs: number;
  stallMs?: number;
}): Promise<{ count: number; firstAt?: number; lastAt?: number; timedOut: boolean }> {
  const rx = requireReceiver();
  const started = Date.now();
  let seen = rx.count;
  let progressAt = started;
  return new Promise((resolve) => {
    const poll = setInterval(() => {
      const now = rx.count;
      if (now !== seen) {
        const at = wallClockMs();
        if (seen === 0 && firstAt === undefined) firstAt = at;
        lastAt = at;
        seen = now;
        progressAt = Date.now();
      }
      const stalled = Date.now() - progressAt > stallMs || Date.now() - started > timeoutMs;
      if (now >= count || stalled) {
        clearInterval(poll);
        resolve({ count: now, firstAt, lastAt, timedOut: now < count });
      }
    }, 1);
  });
}

function count(): number {
  return requireReceiver().count;
}

function reset(): void {
  requireReceiver().clear();
  latencies.clear();
  counted = 0;
  firstAt = undefined;
  lastAt = undefined;
}

function takeLatencies(): { received: number; latencies: Float64Array } {
  const result = { received: counted, latencies: Float64Array.from(latencies.toArray()) };
  latencies.clear();
  counted = 0;
  return result;
}

serveChild({ start, expect, count, reset, takeLatencies }, async () => {
  if (sweeper) clearInterval(sweeper);
  await receiver?.stop();
});
