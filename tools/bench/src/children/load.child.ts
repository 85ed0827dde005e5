import autocannon from 'autocannon';
import type { ClosedLoopSpec, LoadResult } from '../harness/load-spec';
import { updateJson } from '../harness/update-factory';
import { Samples } from '../stats/percentiles';
import { serveChild } from './child-runtime';

/** Closed-loop HTTP load with autocannon: `connections` requests always in flight. */
function run(spec: ClosedLoopSpec): Promise<LoadResult> {
  const latencies = new Samples(1 << 16);
  let nextId = spec.body.kind === 'update' ? spec.body.firstId : 0;
  const body = spec.body;
  const request =
    body.kind === 'update'
      ? {
          method: 'POST',
          setupRequest: (req: object) => ({ ...req, body: updateJson(body.stream, nextId++) }),
        }
      : { method: 'POST', body: body.body };
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        duration: spec.durationSec,
        amount: spec.amount,
        timeout: 30,
        headers: { 'content-type': 'application/json', ...spec.headers },
        requests: [request],
      },
      (error, result) => {
        if (error) {
          reject(error);
          return;
        }
        const statusCodes: Record<string, number> = {};
        for (const [code, { count }] of Object.entries(result.statusCodeStats)) {
          statusCodes[code] = count;
        }
        const durationMs = result.finish.getTime() - result.start.getTime();
        const ok = latencies.count;
        resolve({
          ok,
          non2xx: result.non2xx,
          errors: result.errors,
          durationMs,
          rps: durationMs > 0 ? (ok * 1000) / durationMs : 0,
          latencies: Float64Array.from(latencies.toArray()),
          statusCodes,
          idsUsed: body.kind === 'update' ? nextId - body.firstId : 0,
        });
      },
    );
    instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
      if (status >= 200 && status < 300) latencies.add(ms);
    });
  });
}

serveChild({ run });
