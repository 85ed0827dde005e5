import { randomBytes } from 'node:crypto';

/** Names of the demo's bot, routes and client, as they appear in headers and paths. */
export const DEMO = Object.freeze({
  bot: 'demo-bot',
  supportRoute: 'support',
  shopRoute: 'shop',
  client: 'demo-service',
  /** The private chat of the user who talks to the bot. */
  userChat: 1001,
  /** Another user, who orders from the shop. */
  shopperChat: 2002,
});

/** Throwaway secrets, made fresh for each run; the child gets them by env var. */
export interface DemoSecrets {
  botToken: string;
  supportSigningSecret: string;
  shopSigningSecret: string;
  serviceToken: string;
  adminToken: string;
}

export function makeDemoSecrets(botToken: string): DemoSecrets {
  return {
    botToken,
    supportSigningSecret: randomBytes(32).toString('hex'),
    // Standard Webhooks secrets are `whsec_` and base64 of 24 to 64 bytes.
    shopSigningSecret: `whsec_${randomBytes(32).toString('base64')}`,
    serviceToken: randomBytes(24).toString('base64url'),
    adminToken: randomBytes(18).toString('base64url'),
  };
}

/** The env vars the config below names, with their values. */
export function secretEnv(secrets: DemoSecrets): Record<string, string> {
  return {
    DEMO_BOT_TOKEN: secrets.botToken,
    DEMO_SUPPORT_SIGNING_SECRET: secrets.supportSigningSecret,
    DEMO_SHOP_SIGNING_SECRET: secrets.shopSigningSecret,
    DEMO_SERVICE_TOKEN: secrets.serviceToken,
    ADMIN_TOKEN: secrets.adminToken,
  };
}

/**
 * One polling bot (the emulator plays Telegram through TELEGRAM_API_BASE), two routes to
 * two services: everything said in the user's chat goes to `support`, signed relaygram-v1;
 * /order commands go to `shop`, signed standard-webhooks, as an envelope.
 */
export function demoConfigYaml(options: {
  prefix: string;
  supportUrl: string;
  shopUrl: string;
}): string {
  return `# Written by npm run demo; removed when it ends.
redis:
  prefix: ${options.prefix}
bots:
  - id: ${DEMO.bot}
    token_env: DEMO_BOT_TOKEN
    mode: polling
    allowed_updates: [message, callback_query]
routes:
  - name: ${DEMO.supportRoute}
    bots: [${DEMO.bot}]
    target_url: ${options.supportUrl}
    signing_secret_env: DEMO_SUPPORT_SIGNING_SECRET
    signature: relaygram-v1
    match:
      chat_ids: [${DEMO.userChat}]
  - name: ${DEMO.shopRoute}
    bots: [${DEMO.bot}]
    target_url: ${options.shopUrl}
    signing_secret_env: DEMO_SHOP_SIGNING_SECRET
    signature: standard-webhooks
    format: envelope
    match:
      commands: [/order]
clients:
  - name: ${DEMO.client}
    token_env: DEMO_SERVICE_TOKEN
    bots: [${DEMO.bot}]
`;
}
