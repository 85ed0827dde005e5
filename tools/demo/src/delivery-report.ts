import { errorMessage } from '@relaygram/contracts';
import { verifyRelaygramV1, verifyStandardWebhook, type SigningScheme } from '@relaygram/signing';
import type { Delivery } from '@relaygram/testing';

const KEY_HEADERS = [
  'x-relaygram-bot',
  'x-webhook-route',
  'x-telegram-update-id',
  'x-webhook-attempt',
  'x-relaygram-delivery-id',
];

export interface CheckedDelivery {
  verified: boolean;
  lines: string[];
}

/** Verifies the signature as a receiving service would, and says what arrived. */
export function checkDelivery(
  delivery: Delivery,
  scheme: SigningScheme,
  secret: string,
): CheckedDelivery {
  let verdict: string;
  let verified = false;
  try {
    if (scheme === 'relaygram-v1') {
      verifyRelaygramV1(secret, delivery.body, delivery.headers);
      verdict = `relaygram-v1 signature verified (X-Webhook-Signature ${short(delivery.headers['x-webhook-signature'])})`;
    } else {
      verifyStandardWebhook(secret, delivery.body, delivery.headers);
      verdict = `standard-webhooks signature verified (webhook-signature ${short(delivery.headers['webhook-signature'])})`;
    }
    verified = true;
  } catch (error) {
    const reason = errorMessage(error);
    verdict = `${scheme} signature NOT verified: ${reason}`;
  }
  const headers = KEY_HEADERS.filter((name) => delivery.headers[name] !== undefined)
    .map((name) => `${displayName(name)}: ${delivery.headers[name]}`)
    .join(', ');
  return {
    verified,
    lines: [
      `  ← ${delivery.headers['x-webhook-route']}: POST ${delivery.path} ${describeBody(delivery.json)}`,
      `      ${headers}`,
      `      ${verified ? '✓' : '✗'} ${verdict}`,
    ],
  };
}

/** One phrase for an update or an envelope: its type and what a person would read. */
export function describeBody(body: unknown): string {
  if (!body || typeof body !== 'object') return '(not JSON)';
  const record = body as Record<string, unknown>;
  const envelope = typeof record.bot_id === 'string' ? ' (envelope)' : '';
  const type = Object.keys(record).find((key) => key !== 'update_id' && key !== 'bot_id');
  if (!type) return `update ${String(record.update_id)}${envelope}`;
  const payload = (record[type] ?? {}) as Record<string, unknown>;
  const from = (payload.from ?? {}) as Record<string, unknown>;
  const detail =
    typeof payload.text === 'string'
      ? `"${payload.text}"`
      : typeof payload.data === 'string'
        ? `data "${payload.data}"`
        : '';
  return `update ${String(record.update_id)}${envelope}: ${type} from user ${String(from.id)} ${detail}`.trimEnd();
}

function displayName(header: string): string {
  return header.replace(
    /(^|-)([a-z])/g,
    (_m, dash: string, letter: string) => dash + letter.toUpperCase(),
  );
}

function short(value: string | undefined): string {
  if (!value) return '(missing)';
  return value.length > 24 ? `${value.slice(0, 24)}…` : value;
}
