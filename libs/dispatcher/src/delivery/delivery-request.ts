import type { DeliveryFormat, RouteConfig, Secret } from '@relaygram/config';
import type { DeliveryEntry } from '@relaygram/queue';
import { updateType, type Update } from '@relaygram/routing';
import { createSigner, type DeliverySigner } from '@relaygram/signing';

export const USER_AGENT = 'Relaygram-Dispatcher';

/**
 * What a route's deliveries need, prepared once per route (and again on a reload): the
 * signer has its key imported, so an attempt costs one HMAC. Secrets stay `Secret`s
 * here and are revealed only into the outgoing headers.
 */
export interface PreparedRoute {
  readonly name: string;
  readonly format: DeliveryFormat;
  readonly sign?: DeliverySigner;
  readonly serviceToken?: Secret;
  readonly telegramSecretToken?: Secret;
}

export function prepareRoute(route: RouteConfig): PreparedRoute {
  return {
    name: route.name,
    format: route.format,
    sign: route.signingSecret
      ? createSigner(route.signature, route.signingSecret.reveal())
      : undefined,
    serviceToken: route.serviceToken,
    telegramSecretToken: route.telegramSecretToken,
  };
}

export interface DeliveryRequest {
  headers: Record<string, string>;
  /** The exact bytes sent, and signed. */
  body: Buffer;
}

/**
 * The request of one attempt (SPEC section 5). `format: update` sends the stored bytes
 * as Telegram sent them, unparsed; `envelope` wraps the update's payload. The
 * signature is made now, over these bytes, with a fresh timestamp.
 */
export function buildDeliveryRequest(
  entry: DeliveryEntry,
  route: PreparedRoute,
  attempt: number,
  nowSeconds?: number,
): DeliveryRequest {
  const body = route.format === 'envelope' ? envelopeBody(entry) : entry.body;
  const updateId = String(entry.updateId);
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'User-Agent': USER_AGENT,
    'X-Telegram-Update-Id': updateId,
    'X-Update-Id': updateId,
    'X-Relaygram-Bot': entry.bot,
    'X-Webhook-Route': route.name,
    'X-Webhook-Attempt': String(attempt),
    'X-Relaygram-Delivery-Id': entry.deliveryId,
  };
  if (route.serviceToken) headers['X-Service-Token'] = route.serviceToken.reveal();
  if (route.telegramSecretToken) {
    headers['X-Telegram-Bot-Api-Secret-Token'] = route.telegramSecretToken.reveal();
  }
  if (route.sign) Object.assign(headers, route.sign(body, entry.deliveryId, nowSeconds));
  return { headers, body };
}

/**
 * `{"bot_id": "...", "update_id": N, "<type>": {...}}`. Written out by hand rather than
 * through an object, so any type name Telegram may add (even one like `__proto__`)
 * becomes a plain key.
 */
export function envelopeBody(entry: DeliveryEntry): Buffer {
  const update = JSON.parse(entry.body.toString('utf8')) as Update;
  const type = updateType(update);
  const head = `{"bot_id":${JSON.stringify(entry.bot)},"update_id":${entry.updateId}`;
  if (type === undefined) return Buffer.from(`${head}}`, 'utf8');
  return Buffer.from(`${head},${JSON.stringify(type)}:${JSON.stringify(update[type])}}`, 'utf8');
}
