import { ConfigService } from '@relaygram/config';
import type { RunningApp } from '@relaygram/platform';

/**
 * What a first start shows besides the listening line: where each surface answers, whether
 * the admin page is on, and what to do next when there is nothing to relay yet.
 */
export function standaloneBanner(running: RunningApp): string[] {
  const { config, env } = running.app.get(ConfigService);
  const admin = env.adminToken
    ? `/admin (ADMIN_TOKEN is set; Bearer token for /admin/api)`
    : `/admin answers 404 until ADMIN_TOKEN is set`;
  const lines = [
    `public ${running.url}: webhooks /webhooks/telegram/<bot>, REST /api/v1/<bot>/..., Bot API drop-in /bot<bot number>:<client token>/<method>, health /healthz /health/live /health/ready`,
    `management ${running.adminUrl}: /metrics, ${admin}`,
  ];
  if (config.bots.length === 0) {
    lines.push(
      `no bots yet: add one to ${config.source} (every key is explained in config/relaygram.example.yaml), or see it all work with \`npm run demo\``,
    );
  } else {
    const bots = config.bots.map((bot) => `${bot.id} (${bot.mode})`).join(', ');
    lines.push(`bots: ${bots}; routes: ${config.routes.length}; clients: ${config.clients.length}`);
  }
  return lines;
}
