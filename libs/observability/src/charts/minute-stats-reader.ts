import { Inject, Injectable } from '@nestjs/common';
import { QUEUE_CONTEXT, type QueueContext } from '@relaygram/queue';
import {
  chartMinutes,
  MINUTE_MS,
  minuteBucket,
  type ChartScope,
  type MinuteBucket,
} from './minute-buckets';

export interface MinuteCharts {
  /** Start of the first minute charted (ISO 8601). */
  from: string;
  minute_ms: number;
  /** The last hour's minutes, oldest first, the current (still counting) one last. */
  buckets: MinuteBucket[];
}

/** The last hour of a bot or route, as every process wrote it: one pipeline of HGETALLs. */
@Injectable()
export class MinuteStatsReader {
  constructor(@Inject(QUEUE_CONTEXT) private readonly ctx: QueueContext) {}

  async read(scope: ChartScope, name: string, now = Date.now()): Promise<MinuteCharts> {
    const minutes = chartMinutes(now);
    const pipeline = this.ctx.redis.pipeline();
    for (const minute of minutes) pipeline.hgetall(this.ctx.keys.minuteStats(scope, name, minute));
    const results = (await pipeline.exec()) ?? [];
    const buckets = minutes.map((minute, i) => {
      const [error, hash] = results[i] ?? [null, {}];
      if (error) throw error;
      return minuteBucket(minute, (hash ?? {}) as Record<string, string>);
    });
    return { from: new Date(minutes[0] * MINUTE_MS).toISOString(), minute_ms: MINUTE_MS, buckets };
  }
}
