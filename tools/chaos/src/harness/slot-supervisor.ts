import { sleep, type AppSlot } from './app-process';
import { errorMessage } from '@relaygram/contracts';

/**
 * Keeps its slots running, as a process manager or Kubernetes would: a process that is
 * gone is started again after `delayMs`. Counts the deaths: exits nobody here asked for
 * (RELAYGRAM_FAULTS makes a process SIGKILL itself); a kill -9 or SIGTERM of the run
 * is not one.
 */
export class SlotSupervisor {
  deaths = 0;
  lastDeathAt: number | undefined;
  private readonly counted = new Map<AppSlot, number>();
  private readonly restarting = new Set<AppSlot>();
  private readonly perSlot = new Map<AppSlot, number>();
  private running = false;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly slots: readonly AppSlot[],
    private readonly log: (line: string) => void,
    private readonly delayMs: () => number = () => 0,
  ) {
    for (const slot of slots) this.counted.set(slot, slot.selfExits.length);
  }

  deathsOf(slot: AppSlot): number {
    return this.perSlot.get(slot) ?? 0;
  }

  start(): this {
    this.running = true;
    this.loop = this.watch();
    return this;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  private async watch(): Promise<void> {
    while (this.running) {
      for (const slot of this.slots) {
        const exits = slot.selfExits.length;
        const counted = this.counted.get(slot) ?? 0;
        if (exits > counted) {
          this.deaths += exits - counted;
          this.perSlot.set(slot, (this.perSlot.get(slot) ?? 0) + exits - counted);
          this.lastDeathAt = slot.selfExits[exits - 1]?.at;
          this.counted.set(slot, exits);
        }
        // Also a process that died while starting: its failed start is over by now.
        if (!slot.running && !slot.startPending && !this.restarting.has(slot)) {
          this.restarting.add(slot);
          void this.restart(slot).finally(() => this.restarting.delete(slot));
        }
      }
      await sleep(100);
    }
  }

  private async restart(slot: AppSlot): Promise<void> {
    await sleep(this.delayMs());
    if (slot.running || slot.startPending) return;
    await slot.start().catch((error: unknown) => {
      this.log(`${slot.name}: restart failed: ${errorMessage(error).split('\n')[0]}`);
    });
  }
}
