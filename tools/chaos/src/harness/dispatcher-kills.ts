import { sleep } from './app-process';
import type { ChaosCluster } from './chaos-cluster';

/**
 * kill -9 a random live dispatcher after each gap of `gapMs()` until stopped, and start
 * it again at once: it takes a second or two to be live, and may be the next victim.
 */
export class DispatcherKills {
  kills = 0;
  lastKill: number | undefined;
  private running = true;
  private readonly done: Promise<void>;

  constructor(
    private readonly cluster: ChaosCluster,
    private readonly gapMs: () => number,
  ) {
    this.done = this.loop();
  }

  /** No more kills; resolves once the one under way (if any) is over. */
  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }

  private async loop(): Promise<void> {
    const { dispatchers } = this.cluster;
    while (this.running) {
      await sleep(this.gapMs());
      if (!this.running) break;
      // One killed while starting is started again here (its start failed).
      for (const d of dispatchers) if (!d.running) void d.start().catch(() => undefined);
      const live = dispatchers.filter((d) => d.running);
      const victim = live[Math.floor(Math.random() * live.length)];
      if (!victim) continue;
      await victim.kill9();
      this.kills++;
      this.lastKill = Date.now();
      void victim.start().catch(() => undefined);
    }
  }
}
