import type { DeliveryFormat, Ordering, SignatureScheme } from '../config.types';

/** Defaults of SPEC section 2, applied to keys the file leaves out. */
export const DEFAULTS = Object.freeze({
  redisUrl: 'redis://127.0.0.1:6379',
  redisPrefix: 'relaygram',
  redisWaitReplicas: 0,
  redisWaitTimeout: '500ms',
  telegramApiBase: 'https://api.telegram.org',
  allowedUpdates: Object.freeze(['message', 'callback_query']),
  webhookMaxConnections: 40,
  webhookManage: true,
  webhookCheckEvery: '60s',
  routeFormat: 'update' as DeliveryFormat,
  routeOrdering: 'chat' as Ordering,
  routeConcurrency: 32,
  routeTimeout: '10s',
  routeSignature: 'relaygram-v1' as SignatureScheme,
  routeWebhookReply: true,
  retryMaxAge: '24h',
  retryBackoffCap: '5m',
  retryMaxConsecutive5xx: 8,
});
