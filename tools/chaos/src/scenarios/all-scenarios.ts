import { broadcastKill } from './broadcast-kill.scenario';
import { dispatcherKillInClaim } from './dispatcher-kill-in-claim.scenario';
import { dispatcherKill } from './dispatcher-kill.scenario';
import { dispatcherSigstop } from './dispatcher-sigstop.scenario';
import { drainJobsDeleted } from './drain-jobs-deleted.scenario';
import { flakyReceiver } from './flaky-receiver.scenario';
import { ingressKillBeforeArm } from './ingress-kill-before-arm.scenario';
import { networkDrop } from './network-drop.scenario';
import { outboxFaults } from './outbox-faults.scenario';
import { outboxKill } from './outbox-kill.scenario';
import { pollingIngressKill } from './polling-ingress-kill.scenario';
import { receiverDown } from './receiver-down.scenario';
import { redisKill } from './redis-kill.scenario';
import { reloadRoutes } from './reload-routes.scenario';
import { rollingSigterm } from './rolling-sigterm.scenario';
import type { Scenario } from './scenario';
import { slowRoute } from './slow-route.scenario';
import { stalledForGood } from './stalled-for-good.scenario';
import { stuckWorkers } from './stuck-workers.scenario';
import { webhookIngressKill } from './webhook-ingress-kill.scenario';

/** In the order they run. */
export const SCENARIOS: readonly Scenario[] = [
  dispatcherKill,
  pollingIngressKill,
  webhookIngressKill,
  redisKill,
  receiverDown,
  flakyReceiver,
  slowRoute,
  networkDrop,
  dispatcherSigstop,
  dispatcherKillInClaim,
  ingressKillBeforeArm,
  stalledForGood,
  stuckWorkers,
  rollingSigterm,
  reloadRoutes,
  drainJobsDeleted,
  outboxKill,
  outboxFaults,
  broadcastKill,
];
