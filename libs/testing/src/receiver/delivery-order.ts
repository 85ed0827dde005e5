import type { Delivery } from './recording-receiver';

/** The update id a delivery carries, from its X-Telegram-Update-Id header. */
export const updateIdOf = (delivery: Delivery): number =>
  Number(delivery.headers['x-telegram-update-id']);

/** Update ids in the order of their first arrival: a retry does not move an update. */
export function firstArrivals(deliveries: readonly Delivery[]): number[] {
  const seen = new Set<number>();
  const order: number[] = [];
  for (const delivery of deliveries) {
    const id = updateIdOf(delivery);
    if (!seen.has(id)) {
      seen.add(id);
      order.push(id);
    }
  }
  return order;
}
