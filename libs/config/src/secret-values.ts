import type { RelaygramConfig } from './config.types';
import type { RuntimeEnv } from './runtime-env';
import { Secret } from './secret';

/**
 * Every secret value the config and environment hold: bot tokens (and their secret
 * halves), webhook secrets, client tokens, signing, service and Telegram secret tokens,
 * the admin token. The logger masks them wherever they would appear in a line.
 */
export function secretValuesOf(config: RelaygramConfig, env?: RuntimeEnv): string[] {
  const values = new Set<string>();
  const visit = (value: unknown, depth: number): void => {
    if (value instanceof Secret) {
      const revealed = value.reveal();
      if (revealed) values.add(revealed);
      const colon = revealed.indexOf(':');
      // A bot token's secret half can travel alone (a drop-in path, a log of a URL).
      if (colon > 0 && /^\d+$/.test(revealed.slice(0, colon)))
        values.add(revealed.slice(colon + 1));
      return;
    }
    if (depth > 6 || value === null || typeof value !== 'object') return;
    for (const child of Array.isArray(value) ? value : Object.values(value))
      visit(child, depth + 1);
  };
  visit(config, 0);
  if (env?.adminToken) visit(env.adminToken, 0);
  return [...values];
}
