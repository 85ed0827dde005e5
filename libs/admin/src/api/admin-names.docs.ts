import { OUTBOX_ROUTE } from '@relaygram/contracts';
import type { ParameterDoc } from '@relaygram/openapi';

/** A route name or bot id in a path or a filter (SPEC section 2's names). */
export const NAME: ParameterDoc = {
  type: 'string',
  pattern: '^[a-z0-9-]{1,64}$',
  description: 'A route name or bot id of the config',
};

/** Dead letters' route filter: a configured route, or the outbox's internal one. */
export const DEAD_ROUTE: ParameterDoc = {
  type: 'string',
  pattern: `^([a-z0-9-]{1,64}|${OUTBOX_ROUTE})$`,
  description: `A route name of the config, or \`${OUTBOX_ROUTE}\` for outbox sends that failed`,
};
