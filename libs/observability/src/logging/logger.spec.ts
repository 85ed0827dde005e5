import { Writable } from 'node:stream';
import { Secret } from '@relaygram/config';
import { createLogger, displayUrl, logUrl, maskSecrets, redactText, redactUrl } from './logger';
import { runWithRequestContext } from './request-context';

const TOKEN = '123456789:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0';

function capture(level: 'info' | 'trace' = 'info') {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      raw.push(chunk.toString('utf8'));
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ level, service: 'test', destination }), lines, raw };
}

describe('redactUrl and displayUrl', () => {
  it('masks the token of drop-in and file paths and keeps the rest', () => {
    expect(redactUrl(`/bot${TOKEN}/sendMessage?chat_id=1`)).toBe(
      '/bot123456789:***/sendMessage?chat_id=1',
    );
    expect(redactUrl(`/file/bot${TOKEN}/photos/a.jpg`)).toBe('/file/bot123456789:***/photos/a.jpg');
    expect(redactUrl('/webhooks/telegram/shop')).toBe('/webhooks/telegram/shop');
  });

  it('shows URLs without user info, tokens or query', () => {
    expect(displayUrl('https://user:pw@relay.example.com/hook?key=secret')).toBe(
      'https://relay.example.com/hook?…',
    );
    expect(displayUrl(`https://api.example.com/bot${TOKEN}/x`)).toBe(
      'https://api.example.com/bot123456789:***/x',
    );
    expect(displayUrl('')).toBe('');
    expect(displayUrl(displayUrl('https://h.example/p?q=1'))).toBe('https://h.example/p?…');
  });

  it('masks bot tokens anywhere in a text', () => {
    expect(redactText(`calling with ${TOKEN} now`)).toBe('calling with 123456789:*** now');
    expect(redactText('at 2026-01-01T10:50:34.123Z')).toBe('at 2026-01-01T10:50:34.123Z');
  });
});

describe('createLogger', () => {
  it('redacts secret headers and secret-named fields', () => {
    const { logger, lines } = capture();
    logger.info(
      {
        req: { headers: { authorization: 'Bearer admin', 'x-service-token': 'client' } },
        headers: { 'x-telegram-bot-api-secret-token': 'hook', cookie: 'c=1' },
        route: { name: 'site', signingSecret: 'sign', service_token: 'svc' },
        token: 'top',
      },
      'hello',
    );
    const text = JSON.stringify(lines[0]);
    for (const secret of ['Bearer admin', 'client', 'hook', 'c=1', 'sign', 'svc', 'top'])
      expect(text).not.toContain(`"${secret}"`);
    expect(lines[0]).toMatchObject({
      token: '***',
      route: { name: 'site', signingSecret: '***' },
    });
  });

  it('logs an error with its stack and a Redis command by name only, never its arguments', () => {
    const { logger, lines } = capture();
    const error = Object.assign(new Error('ERR script failed'), {
      command: { name: 'evalsha', args: ['sha', '2', '{"message":{"text":"private"}}'] },
    });
    logger.error({ err: error }, 'enqueue failed');
    expect(lines[0]).toMatchObject({
      msg: 'enqueue failed',
      err: { type: 'Error', message: 'ERR script failed', command: { name: 'evalsha' } },
    });
    expect((lines[0].err as { stack: string }).stack).toContain('logger.spec');
    expect(JSON.stringify(lines[0])).not.toContain('private');
  });

  it('prints config secrets nested anywhere as ***', () => {
    const { logger, raw } = capture();
    logger.info(
      { bot: { id: 'sol', token: new Secret(TOKEN) }, deep: { a: { b: new Secret('s3') } } },
      'x',
    );
    expect(raw.join('')).not.toContain(TOKEN.split(':')[1]);
    expect(raw.join('')).not.toContain('s3');
  });

  it('keeps URLs and paths readable with the token masked', () => {
    const { logger, lines } = capture();
    logger.info({ url: `/bot${TOKEN}/getMe`, req: { url: `/bot${TOKEN}/getMe` } }, 'request');
    expect(lines[0]).toMatchObject({
      url: '/bot123456789:***/getMe',
      req: { url: '/bot123456789:***/getMe' },
    });
  });

  it('masks a token that reached the message itself', () => {
    const { logger, raw } = capture();
    logger.warn(`failed: GET https://api.telegram.org/bot${TOKEN}/getMe`);
    expect(raw.join('')).not.toContain(TOKEN.split(':')[1]);
    expect(raw.join('')).toContain('/bot123456789:***/getMe');
  });

  it('adds the request id to lines written while serving a request', () => {
    const { logger, lines } = capture();
    logger.info('outside');
    runWithRequestContext({ reqId: 'r-1' }, () => logger.info('inside'));
    expect(lines[0].req_id).toBeUndefined();
    expect(lines[1]).toMatchObject({ msg: 'inside', req_id: 'r-1', service: 'test' });
  });

  it('honours the level', () => {
    const { logger, lines } = capture('info');
    logger.debug('hidden');
    logger.info('shown');
    expect(lines.map((l) => l.msg)).toEqual(['shown']);
  });
});

describe('redaction of tokens spelled unusually', () => {
  const token = '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw';
  it.each([
    [`/bot${token}/sendMessage`],
    [`/Bot${token}/sendMessage`],
    [`/BOT${token.replace(':', '%3A')}/sendMessage`],
    [`/file/bot${token.replace(':', '%3a')}/photos/a.jpg`],
    [`/bot${token.replace(':', '%253A')}/getMe`],
  ])('masks the secret in %s', (url) => {
    const secret = token.split(':')[1];
    expect(redactUrl(url)).not.toContain(secret);
    expect(redactText(`GET ${url} failed`)).not.toContain(secret);
  });

  it('masks a short client token after a bot id anywhere in a line', () => {
    expect(redactText('token 123456789%3Aclienttoken-0123456 seen')).toBe(
      'token 123456789:*** seen',
    );
  });
});

describe('logUrl', () => {
  it('keeps the path and the query keys, never the query values', () => {
    expect(logUrl('/admin/api?token=s3cr3t-admin-token&limit=5')).toBe(
      '/admin/api?token=***&limit=***',
    );
    expect(logUrl('/webhooks/telegram/shop?secret=abc&flag')).toBe(
      '/webhooks/telegram/shop?secret=***&flag=***',
    );
    expect(logUrl(`/bot${TOKEN}/getMe?x=1`)).toBe('/bot123456789:***/getMe?x=***');
    expect(logUrl('/healthz')).toBe('/healthz');
  });
});

describe('maskSecrets', () => {
  it('masks every configured secret wherever it appears in a line, raw or URL-encoded', () => {
    const secret = 'client-token/with+chars-0123';
    maskSecrets([secret, 'short']);
    expect(
      redactText(`{"msg":"refused ${secret} here","err":"x ${encodeURIComponent(secret)}"}`),
    ).toBe('{"msg":"refused *** here","err":"x ***"}');
    // Values too short to be a configured secret are left alone (they would mask words).
    expect(redactText('a short line')).toBe('a short line');
  });
});
