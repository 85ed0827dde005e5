import type { ClientConfig, PullRouteConfig, RouteMatch } from './config.types';
import type { ProblemList } from './problem-list';
import { isMapping } from './schema/config-rules';
import type { RouteDto } from './schema/route.dto';
import { formatPath, type PathSegment } from './yaml-path';

const NOTHING_SENT =
  'not for a pull route: nothing is sent to it, its client calls getUpdates with its own token';

/**
 * Keys of a push route that would mean nothing on a pull route. Refused rather than
 * ignored: a signing secret that silently stops being used is a surprise to find late.
 */
const PUSH_ONLY_KEYS: Readonly<Record<string, string>> = {
  signing_secret_env: NOTHING_SENT,
  signature: NOTHING_SENT,
  service_token_env: NOTHING_SENT,
  telegram_secret_token_env: NOTHING_SENT,
  timeout: NOTHING_SENT,
  webhook_reply: 'not for a pull route: its client calls the Bot API through the drop-in',
  format: 'not for a pull route: getUpdates returns the updates as Telegram sent them',
  concurrency: 'not for a pull route: its client reads one batch at a time per bot',
};

const RETRY_PUSH_ONLY =
  'not for a pull route: nothing is retried; an update waits until its client confirms it or max_age passes';

export interface PullRouteEntry {
  readonly route: PullRouteConfig;
  readonly path: readonly PathSegment[];
}

/**
 * A route with `pull:`. Matching, bots and `retry.max_age` work as for a push route;
 * its deliveries wait in one lane per bot in acceptance order (what `ordering: strict`
 * gives a push route, and the one order a getUpdates stream can have), so `strict` is
 * the only ordering accepted.
 */
export function assemblePullRoute(
  dto: RouteDto,
  path: readonly PathSegment[],
  bots: readonly string[],
  match: RouteMatch | undefined,
  maxAgeMs: number,
  problems: ProblemList,
): PullRouteConfig {
  if (dto.target_url !== undefined) {
    problems.add(
      path,
      'has both target_url and pull; a route is either pushed to its target_url or pulled by its client, not both',
    );
  }
  for (const [key, message] of Object.entries(PUSH_ONLY_KEYS)) {
    if ((dto as unknown as Record<string, unknown>)[key] !== undefined)
      problems.add([...path, key], message);
  }
  if (dto.ordering !== undefined && dto.ordering !== 'strict') {
    problems.add(
      [...path, 'ordering'],
      'a pull route keeps one lane per bot in acceptance order (strict): its client reads one stream, as from Telegram',
    );
  }
  if (isMapping(dto.retry)) {
    for (const key of ['backoff_cap', 'max_consecutive_5xx'] as const) {
      if (dto.retry[key] !== undefined) problems.add([...path, 'retry', key], RETRY_PUSH_ONLY);
    }
  }
  const client = isMapping(dto.pull) && typeof dto.pull.client === 'string' ? dto.pull.client : '';
  return {
    name: dto.name,
    bots,
    ...(match ? { match } : {}),
    pull: { client },
    maxAgeMs,
  };
}

/**
 * A pull route's client must exist and may use every bot of the route; and a client
 * reads at most one pull route per bot, since its getUpdates on a bot is one stream.
 */
export function checkPullRouteClients(
  pulls: readonly PullRouteEntry[],
  clients: readonly ClientConfig[],
  clientPaths: ReadonlyMap<string, readonly PathSegment[]>,
  problems: ProblemList,
): void {
  const byName = new Map(clients.map((client) => [client.name, client]));
  const owners = new Map<string, readonly PathSegment[]>();
  for (const { route, path } of pulls) {
    const clientPath = [...path, 'pull', 'client'];
    if (route.pull.client === '') continue;
    const client = byName.get(route.pull.client);
    if (!client) {
      problems.add(clientPath, `unknown client "${route.pull.client}"`);
      continue;
    }
    const missing = route.bots.filter((bot) => !client.bots.includes(bot));
    if (missing.length) {
      const where = clientPaths.get(client.name);
      problems.add(
        clientPath,
        `client "${client.name}" may not use bot${missing.length > 1 ? 's' : ''} ${missing.map((b) => `"${b}"`).join(', ')}; add ${missing.length > 1 ? 'them' : 'it'} to ${where ? formatPath([...where, 'bots']) : 'its bots'} or list the route's bots`,
      );
      continue;
    }
    for (const bot of route.bots) {
      const key = `${client.name}\n${bot}`;
      const earlier = owners.get(key);
      if (earlier) {
        problems.add(
          clientPath,
          `client "${client.name}" already pulls bot "${bot}" through ${formatPath(earlier)}; a client's getUpdates on a bot reads one route`,
        );
        break;
      }
      owners.set(key, path);
    }
  }
}
