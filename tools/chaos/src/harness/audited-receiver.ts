import type { SigningScheme } from '@relaygram/signing';
import { createVerifier, type DeliveryVerifier } from '@relaygram/signing';
import type { Update } from '@relaygram/routing';
import { RecordingReceiver, type Delivery, type ResponseSpec } from '@relaygram/testing';
import { errorMessage } from '@relaygram/contracts';

/** One request a receiver got, reduced to what the audit needs. */
export interface Arrival {
  /** Position among every request every receiver of the run got: the arrival order. */
  seq: number;
  /** The route the receiver serves (not the header: a wrong header is a finding). */
  route: string;
  bot: string;
  updateId: number;
  deliveryId: string;
  attempt: number;
  /** What the receiver answered; 0 for a dropped connection. */
  status: number;
  at: number;
}

/** How a receiver answers one delivery; `update` is the Telegram update it carries. */
export type Behaviour = (arrival: Arrival, update: Update | undefined) => ResponseSpec;

export interface ReceiverSecurity {
  scheme?: SigningScheme;
  signingSecret?: string;
  /** Header name → the one secret value this route is configured to send in it. */
  allowedSecretHeaders: Record<string, string>;
  /** Every secret of the install: none may appear anywhere else in a request. */
  secrets: readonly string[];
}

const FAST_ANSWER: ResponseSpec = { status: 204 };
/** Deliveries are digested as they arrive; the receiver's own list is emptied past this. */
const KEEP_RAW = 256;
let arrivalSeq = 0;

/**
 * A recording receiver (from @relaygram/testing) for one route, with a behaviour the
 * scenario sets (fast, 503 for 30 %, slow, a webhook reply...) and a check of every
 * request: the route's signature verifies over the exact bytes, the headers agree with
 * the body, and no configured secret appears anywhere but in the one header this route
 * is configured to send it in. Arrivals are kept in a compact form for the audit.
 */
export class AuditedReceiver {
  arrivals: Arrival[] = [];
  /** Requests that failed a check: bad signature, inconsistent headers, a secret leaked (the first 50). */
  problems: string[] = [];
  problemCount = 0;
  behaviour: Behaviour = () => FAST_ANSWER;
  private rx: RecordingReceiver | undefined;
  private readonly verify: DeliveryVerifier | undefined;

  private constructor(
    readonly route: string,
    readonly port: number,
    private readonly security: ReceiverSecurity,
  ) {
    this.verify =
      security.scheme && security.signingSecret
        ? createVerifier(security.scheme, security.signingSecret)
        : undefined;
  }

  /** `port` should be one nothing else takes while the receiver is down (see stablePort). */
  static async start(
    route: string,
    security: ReceiverSecurity,
    port: number,
  ): Promise<AuditedReceiver> {
    const first = await RecordingReceiver.start({ port });
    const receiver = new AuditedReceiver(route, first.port, security);
    receiver.attach(first);
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get up(): boolean {
    return this.rx !== undefined;
  }

  /** The receiver goes away: its port refuses connections until `bringUp`. */
  async takeDown(): Promise<void> {
    const rx = this.rx;
    this.rx = undefined;
    await rx?.stop();
  }

  async bringUp(): Promise<void> {
    if (this.rx) return;
    this.attach(await RecordingReceiver.start({ port: this.port }));
  }

  /** Starts a new audit period: what arrived before is forgotten. */
  resetLog(): void {
    this.arrivals = [];
    this.problems = [];
    this.problemCount = 0;
    this.behaviour = () => FAST_ANSWER;
  }

  async stop(): Promise<void> {
    await this.takeDown();
  }

  private attach(rx: RecordingReceiver): void {
    this.rx = rx;
    rx.respondWith((delivery) => this.answer(rx, delivery));
  }

  private answer(rx: RecordingReceiver, delivery: Delivery): ResponseSpec {
    if (rx.deliveries.length > KEEP_RAW) rx.deliveries.splice(0, rx.deliveries.length);
    const headers = delivery.headers;
    const update = updateOf(delivery.json, headers['x-relaygram-bot']);
    const arrival: Arrival = {
      seq: ++arrivalSeq,
      route: this.route,
      bot: headers['x-relaygram-bot'] ?? '',
      updateId: Number(headers['x-telegram-update-id']),
      deliveryId: headers['x-relaygram-delivery-id'] ?? '',
      attempt: Number(headers['x-webhook-attempt']),
      status: 0,
      at: delivery.receivedAt,
    };
    this.check(delivery, arrival, update);
    let spec: ResponseSpec;
    try {
      spec = this.behaviour(arrival, update);
    } catch (error) {
      spec = { status: 500, body: `behaviour failed: ${errorMessage(error)}` };
    }
    arrival.status = 'status' in spec ? spec.status : 0;
    this.arrivals.push(arrival);
    return spec;
  }

  private check(delivery: Delivery, arrival: Arrival, update: Update | undefined): void {
    const headers = delivery.headers;
    const problem = (text: string) => {
      this.problemCount++;
      if (this.problems.length < 50) this.problems.push(`${this.route}: ${text}`);
    };
    if (headers['x-webhook-route'] !== this.route) {
      problem(`X-Webhook-Route ${headers['x-webhook-route']} at the receiver of ${this.route}`);
    }
    if (
      !Number.isSafeInteger(arrival.updateId) ||
      headers['x-update-id'] !== String(arrival.updateId)
    ) {
      problem(`X-Telegram-Update-Id / X-Update-Id missing or different`);
    }
    if (update?.update_id !== arrival.updateId) {
      problem(`update ${arrival.updateId}: the body carries update_id ${update?.update_id}`);
    }
    if (!/^[0-9a-f-]{36}$/.test(arrival.deliveryId)) problem('X-Relaygram-Delivery-Id missing');
    if (this.verify) {
      try {
        this.verify(delivery.body, headers);
      } catch (error) {
        problem(`update ${arrival.updateId}: signature does not verify: ${errorMessage(error)}`);
      }
    }
    for (const secret of this.security.secrets) {
      for (const [name, value] of Object.entries(headers)) {
        if (!value.includes(secret)) continue;
        if (this.security.allowedSecretHeaders[name] === value) continue;
        problem(`a configured secret was sent in the ${name} header`);
      }
      if (delivery.body.includes(secret)) problem('a configured secret was sent in a body');
    }
  }
}

/**
 * The update a delivery carries: the body itself for `format: update`, rebuilt from the
 * envelope (`{bot_id, update_id, <type>: {...}}`) otherwise.
 */
function updateOf(json: unknown, bot: string | undefined): Update | undefined {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return undefined;
  const body = json as Record<string, unknown>;
  if (typeof body.update_id !== 'number') return undefined;
  if (!('bot_id' in body)) return body as Update;
  if (body.bot_id !== bot) return undefined;
  const { bot_id: _bot, ...update } = body;
  return update as Update;
}
