import type { DeliveryFormat, RouteConfig, Secret } from '@relaygram/config';
import type { DeliveryEntry } from '@relaygram/queue';
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

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

function isJsonWhitespace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/**
 * `{"bot_id": "...", "update_id": N, "<type>": {...}}`: the update's own bytes with
 * `bot_id` spliced in after its opening brace. Nothing is parsed or re-serialised, so
 * the payload arrives exactly as Telegram wrote it (numbers beyond 2^53, key order, any
 * type name), and an update nested deeper than JSON.stringify's stack can go (ingress
 * accepts up to 1 MiB) cannot wedge its lane. Ingress only accepts a JSON object with
 * an update_id, so the bytes start with `{` and have a member.
 */
export function envelopeBody(entry: DeliveryEntry): Buffer {
  const raw = entry.body;
  let start = 0;
  while (isJsonWhitespace(raw[start])) start += 1;
  if (raw[start] !== OPEN_BRACE) throw new Error('stored update is not a JSON object');
  let first = start + 1;
  while (isJsonWhitespace(raw[first])) first += 1;
  const head = `{"bot_id":${JSON.stringify(entry.bot)}${raw[first] === CLOSE_BRACE ? '' : ','}`;
  return Buffer.concat([Buffer.from(head, 'utf8'), raw.subarray(start + 1)]);
}
