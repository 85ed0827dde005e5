/** Every environment variable Relaygram reads (SPEC section 1), besides `*_env` secrets. */
export const RELAYGRAM_ENV = [
  'RELAYGRAM_CONFIG',
  'REDIS_URL',
  'PORT',
  'HOST',
  'ADMIN_PORT',
  'ADMIN_HOST',
  'TELEGRAM_API_BASE',
  'ADMIN_TOKEN',
  'LOG_LEVEL',
];
