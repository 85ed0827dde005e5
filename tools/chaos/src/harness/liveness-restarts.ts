import { request } from 'undici';
import { sleep, type AppSlot } from './app-process';

/**
 * Restarts a slot whose `/health/live` answers 503, as Kubernetes' liveness probe
 * would: SIGTERM, SIGKILL after the grace period, start again. A probe that gets no
 * answer (a process starting or gone) is not a failure here: the slot supervisor and
 * the scenario look after those.
 */
export class LivenessRestarts {
  restarts = 0;
  lastRestartAt: number | undefined;
  readonly reasons: string[] = [];
  private running = true;
  private readonly done: Promise<void>;

  constructor(
    private readonly slots: readonly AppSlot[],
    private readonly log: (line: string) => void,
    private readonly periodMs = 500,
    private readonly graceMs = 10_000,
  ) {
    this.done = this.loop();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }

  private async loop(): Promise<void> {
    while (this.running) {
      await sleep(this.periodMs);
      for (const slot of this.slots) {
        if (!this.running || !slot.running || slot.startPending) continue;
        const failure = await probe(slot);
        if (failure === undefined) continue;
        this.reasons.push(failure);
        this.log(`${slot.name}: /health/live failed (${failure}); restarting it`);
        const end = await slot.terminate(this.graceMs);
        this.restarts++;
        this.lastRestartAt = end.at;
        await slot.start().catch(() => undefined);
      }
    }
  }
}

/** The failing check's message when the probe answers 503; undefined otherwise. */
async function probe(slot: AppSlot): Promise<string | undefined> {
  try {
    const res = await request(`${slot.url}/health/live`, { headersTimeout: 2_000 });
    const body = (await res.body.json()) as { error?: Record<string, { message?: string }> };
    if (res.statusCode !== 503) return undefined;
    const messages = Object.values(body.error ?? {}).map((e) => e.message ?? 'down');
    return messages.join('; ') || 'down';
  } catch {
    return undefined;
  }
}
