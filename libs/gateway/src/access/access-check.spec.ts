import { Secret, type BotConfig, type ClientConfig, type RelaygramConfig } from '@relaygram/config';
import { checkAccess, type AccessRequest } from './access-check';
import { ClientDirectory } from './client-directory';
import { hasRedirectingMethod, isReservedMethod, queryRedirectsMethod } from './method-rules';

const SITE_TOKEN = 'site-token-0123456789abcdef';
const NARROW_TOKEN = 'narrow-token-0123456789abcdef';

function bot(id: string, numericId: string, isDefault = false): BotConfig {
  return {
    id,
    tokenEnv: 'X',
    token: new Secret(`${numericId}:AAsecretsecretsecretsecretsecretsecret`),
    numericId,
    mode: 'polling',
    allowedUpdates: ['message'],
    default: isDefault,
  };
}

function client(name: string, token: string, bots: string[], methods?: string[]): ClientConfig {
  return { name, tokenEnv: 'X', token: new Secret(token), bots, methods };
}

function config(bots: BotConfig[]): RelaygramConfig {
  return {
    redis: { url: 'redis://127.0.0.1:6379', prefix: 'x', waitReplicas: 0, waitTimeoutMs: 500 },
    telegram: { apiBase: 'http://127.0.0.1:1' },
    bots,
    routes: [],
    clients: [
      client('site', SITE_TOKEN, ['main', 'other']),
      client('narrow', NARROW_TOKEN, ['main'], ['sendmessage']),
    ],
    warnings: [],
    source: 'test.yaml',
  };
}

const directory = new ClientDirectory(
  config([bot('main', '111', true), bot('other', '222'), bot('lonely', '333')]),
);

function check(request: Partial<AccessRequest>) {
  return checkAccess(directory, {
    token: SITE_TOKEN,
    bot: { by: 'default' },
    method: 'sendMessage',
    ...request,
  });
}

describe('checkAccess', () => {
  it('grants a known client its bots and methods', () => {
    const granted = check({ bot: { by: 'id', id: 'other' } });
    expect(granted).toMatchObject({ ok: true, client: { name: 'site' }, bot: { id: 'other' } });
  });

  it('resolves the default bot and the drop-in numeric id', () => {
    expect(check({})).toMatchObject({ ok: true, bot: { id: 'main' } });
    expect(check({ bot: { by: 'numeric-id', numericId: '222' } })).toMatchObject({
      ok: true,
      bot: { id: 'other' },
    });
  });

  it('refuses a missing or wrong token before anything else', () => {
    for (const token of [undefined, '', 'wrong', `${SITE_TOKEN}x`, SITE_TOKEN.slice(1)]) {
      expect(check({ token, bot: { by: 'id', id: 'nope' }, method: 'getUpdates' })).toEqual({
        ok: false,
        reason: 'unauthorized',
      });
    }
  });

  it('tells an unknown bot from a forbidden one; an unknown numeric id is a bad token', () => {
    expect(check({ bot: { by: 'id', id: 'nope' } })).toMatchObject({ reason: 'unknown-bot' });
    expect(check({ bot: { by: 'id', id: 'lonely' } })).toMatchObject({
      reason: 'bot-forbidden',
      botId: 'lonely',
    });
    expect(check({ bot: { by: 'numeric-id', numericId: '999' } })).toMatchObject({
      reason: 'unauthorized',
    });
  });

  it('answers no-default-bot when no bot is the default', () => {
    const noDefault = new ClientDirectory(config([bot('main', '111'), bot('other', '222')]));
    const denial = checkAccess(noDefault, {
      token: SITE_TOKEN,
      bot: { by: 'default' },
      method: 'sendMessage',
    });
    expect(denial).toEqual({ ok: false, reason: 'no-default-bot' });
  });

  it('refuses reserved methods in any case, even for a client that may call everything', () => {
    for (const method of [
      'getUpdates',
      'getupdates',
      'SETWEBHOOK',
      'DeleteWebhook',
      'logOut',
      'close',
    ]) {
      expect(check({ method })).toEqual({ ok: false, reason: 'reserved-method' });
    }
  });

  it('refuses method names outside ^[A-Za-z]+$', () => {
    for (const method of ['', 'send-message', 'send/Message', 'sendMessage2', 'é']) {
      expect(check({ method })).toEqual({ ok: false, reason: 'invalid-method' });
    }
  });

  it('holds a client to its method allow-list, case-insensitively', () => {
    expect(check({ token: NARROW_TOKEN, method: 'SendMessage' })).toMatchObject({ ok: true });
    expect(check({ token: NARROW_TOKEN, method: 'sendPhoto' })).toEqual({
      ok: false,
      reason: 'method-forbidden',
      method: 'sendPhoto',
    });
    expect(check({ token: NARROW_TOKEN, bot: { by: 'id', id: 'other' } })).toMatchObject({
      reason: 'bot-forbidden',
    });
  });

  it('checks only token and bot when no method is named', () => {
    expect(check({ method: undefined })).toMatchObject({ ok: true });
  });

  it('counts clients per bot', () => {
    expect(directory.clientCount).toBe(2);
    expect(directory.clientsOf('main')).toBe(2);
    expect(directory.clientsOf('other')).toBe(1);
    expect(directory.clientsOf('lonely')).toBe(0);
  });
});

describe('method rules', () => {
  it('knows the reserved methods', () => {
    expect(isReservedMethod('Close')).toBe(true);
    expect(isReservedMethod('closeForumTopic')).toBe(false);
  });

  it('finds a method parameter naming another method, in any case and encoding', () => {
    expect(
      hasRedirectingMethod(
        [
          ['chat_id', 1],
          ['Method', 'getUpdates'],
        ],
        'sendMessage',
      ),
    ).toBe(true);
    expect(hasRedirectingMethod([['method', { x: 1 }]], 'sendMessage')).toBe(true);
    expect(hasRedirectingMethod([['methods', 'getUpdates']], 'sendMessage')).toBe(false);
    // Telegraf repeats the path's method in every upload: that changes nothing.
    expect(hasRedirectingMethod([['method', 'senddocument']], 'sendDocument')).toBe(false);
    expect(queryRedirectsMethod('chat_id=1&method=getUpdates', 'sendMessage')).toBe(true);
    expect(queryRedirectsMethod('chat_id=1&%6Dethod=getUpdates', 'sendMessage')).toBe(true);
    expect(queryRedirectsMethod('chat_id=1&method=sendMessage', 'sendMessage')).toBe(false);
    expect(queryRedirectsMethod('chat_id=1&text=method', 'sendMessage')).toBe(false);
    expect(queryRedirectsMethod('', 'sendMessage')).toBe(false);
  });
});
