import { dispatcherKill } from './dispatcher-kill.scenario';
import { flakyReceiver } from './flaky-receiver.scenario';
import { networkDrop } from './network-drop.scenario';
import { pollingIngressKill } from './polling-ingress-kill.scenario';
import { receiverDown } from './receiver-down.scenario';
import { redisKill } from './redis-kill.scenario';
import type { Scenario } from './scenario';
import { slowRoute } from './slow-route.scenario';
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
];
