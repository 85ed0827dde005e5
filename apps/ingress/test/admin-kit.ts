import { DeadReason, laneId } from '@relaygram/contracts';
import { startApp, type RunningApp } from '@relaygram/platform';
import { newDeliveryId } from '@relaygram/queue';
import type { QueueFixture } from '@relaygram/queue/testing';
import { laneKeyFor, type Update } from '@relaygram/routing';
import { captureLogs, inProcessStart } from '@relaygram/testing';
import { IngressAppModule } from '../src/app.module';

export {
  captureLogs,
  uniquePrefix,
  writeConfigObject as writeConfig,
  type CapturedLogs,
} from '@relaygram/testing';

export async function bootIngress(
  configPath: string,
  env: Record<string, string | undefined>,
  logs = captureLogs(),
): Promise<RunningApp> {
  return startApp(
    { service: 'ingress', module: (boot) => IngressAppModule.forRoot(boot) },
    inProcessStart(configPath, { LOG_LEVEL: 'info', ...env }, logs.stream),
  );
}

export function messageUpdate(updateId: number, chatId: number, text: string): Update {
  return {
    update_id: updateId,
    message: {
      message_id: updateId,
      date: Math.floor(Date.now() / 1000),
      chat: { id: chatId, type: 'private' },
      from: { id: chatId, is_bot: false, first_name: 'Ada' },
      text,
    },
  } as Update;
}

/** Accepts an update for one route, as ingress does, and returns its lane and delivery id. */
export async function enqueue(
  store: QueueFixture,
  bot: string,
  route: string,
  update: Update,
): Promise<{ deliveryId: string; lane: string }> {
  const deliveryId = newDeliveryId();
  const lane = laneId(route, bot, laneKeyFor('chat', update, deliveryId));
  const result = await store.enqueuer.enqueue({
    bot,
    updateId: update.update_id,
    body: Buffer.from(JSON.stringify(update)),
    deliveries: [{ route, lane, deliveryId }],
  });
  if (result.status !== 'queued') throw new Error(`update not queued: ${result.status}`);
  await result.jobsAdded;
  return { deliveryId, lane };
}

/**
 * Makes a dead letter the way the dispatcher does (the head of its lane finished as
 * dead). Only for apps that run no dispatcher, which would race for the lane.
 */
export async function makeDeadLetter(
  store: QueueFixture,
  bot: string,
  route: string,
  update: Update,
  reason: DeadReason = DeadReason.Rejected,
): Promise<string> {
  const { deliveryId, lane } = await enqueue(store, bot, route, update);
  const head = await store.driver.finishOne(route, () => ({
    kind: 'dead',
    dead: { reason, attempts: 1, lastStatus: 400, lastBody: '{"error":"bad update"}' },
  }));
  if (head.entry.deliveryId !== deliveryId)
    throw new Error(`lane ${lane} did not start with the new delivery`);
  return deliveryId;
}
