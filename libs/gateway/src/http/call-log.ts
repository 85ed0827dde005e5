import type { Logger } from 'pino';
import type { GatewayAccess } from '../access/request-access';

/**
 * One line per call, REST and drop-in alike: a failure on the gateway's side at warn,
 * every other call at debug. The fields are built only when the level is on, so the
 * hot path, at info, allocates nothing for it.
 */
export function logCall(
  logger: Logger,
  warn: boolean,
  access: GatewayAccess,
  status: number,
  problem?: string,
  errorCode?: number,
): void {
  const level = warn ? 'warn' : 'debug';
  if (!logger.isLevelEnabled(level)) return;
  const fields = {
    req_id: access.reqId,
    client: access.client.name,
    bot: access.bot.id,
    // The drop-in's path, its token masked; REST paths hold no secret but name no method.
    ...(access.loggedPath === undefined ? { method: access.method } : { path: access.loggedPath }),
    status,
    errorCode,
    problem,
  };
  const message =
    access.loggedPath !== undefined
      ? 'drop-in call'
      : warn
        ? 'gateway call failed'
        : 'gateway call';
  logger[level](fields, message);
}
