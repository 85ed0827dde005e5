import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { fuzzParameters } from '@relaygram/testing';
import { stringify } from 'yaml';
import { ConfigError, loadConfig, loadConfigOrThrow } from './loader';

/**
 * The config loader reads a file an operator wrote by hand: whatever it holds, loading
 * answers with problems (one line each, no secret in any) or a config, and the throwing
 * form throws nothing but a ConfigError.
 *
 * Replay a failure with the seed fast-check prints: FC_SEED=<seed> (and FC_PATH=<path>);
 * FC_NUM_RUNS raises or lowers the number of runs.
 */
const botToken = () =>
  `${randomInt(100_000, 9_999_999_999)}:${randomBytes(27).toString('base64url')}`;
const ENV: NodeJS.ProcessEnv = {
  SOL_PROD_BOT_TOKEN: botToken(),
  SHOP_BOT_TOKEN: botToken(),
  SHOP_BOT_WEBHOOK_SECRET: randomBytes(24).toString('base64url'),
  SHOP_SIGNING_SECRET: randomBytes(24).toString('base64url'),
  SITE_SERVICE_TOKEN: randomBytes(24).toString('base64url'),
  WHSEC: `whsec_${randomBytes(32).toString('base64')}`,
};
const SECRET_VALUES = Object.values(ENV) as string[];

/** SPEC section 2's example, valid as is. */
const BASE = {
  redis: { url: 'redis://127.0.0.1:6379', prefix: 'relaygram' },
  telegram: { api_base: 'https://api.telegram.org' },
  bots: [
    {
      id: 'sol-prod',
      token_env: 'SOL_PROD_BOT_TOKEN',
      mode: 'polling',
      allowed_updates: ['message', 'callback_query'],
      default: true,
    },
    {
      id: 'shop-bot',
      token_env: 'SHOP_BOT_TOKEN',
      username: 'shop_bot',
      mode: 'webhook',
      webhook: {
        url: 'https://relay.example.com/webhooks/telegram/shop-bot',
        secret_token_env: 'SHOP_BOT_WEBHOOK_SECRET',
        max_connections: 40,
        manage: true,
      },
    },
  ],
  routes: [
    {
      name: 'shop-admin',
      bots: ['shop-bot'],
      target_url: 'http://shop-service:8080/telegram/updates',
      signing_secret_env: 'SHOP_SIGNING_SECRET',
      signature: 'relaygram-v1',
      match: { user_ids: [123456789], commands: ['/admin', '/products', '/orders'] },
    },
    {
      name: 'site',
      bots: ['sol-prod'],
      target_url: 'https://site.example/telegram/updates',
      format: 'envelope',
      service_token_env: 'SITE_SERVICE_TOKEN',
      ordering: 'strict',
      retry: { max_age: '24h', backoff_cap: '5m', max_consecutive_5xx: 8 },
    },
  ],
  clients: [{ name: 'site', token_env: 'SITE_SERVICE_TOKEN', bots: ['sol-prod'] }],
};

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const dir = mkdtempSync(join(tmpdir(), 'relaygram-config-fuzz-'));
let fileNo = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function writeFile(content: string | Buffer): string {
  const path = join(dir, `config-${fileNo++}.yaml`);
  writeFileSync(path, content);
  return path;
}

/** Loading never throws; problems are single lines naming no secret; the throwing form throws only ConfigError. */
function checkLoad(path: string): void {
  const result = loadConfig({ path, env: ENV });
  if (!result.ok) {
    expect(result.problems.length).toBeGreaterThan(0);
    for (const problem of result.problems) {
      expect(typeof problem).toBe('string');
      expect(problem).not.toMatch(/[\r\n]/);
      for (const secret of SECRET_VALUES) expect(problem).not.toContain(secret);
    }
  }
  try {
    loadConfigOrThrow({ path, env: ENV });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
  }
  const noEnv = loadConfig({ path, noEnv: true });
  expect(typeof noEnv.ok).toBe('boolean');
}

const scalar = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(
    '',
    '30s',
    '0',
    '-1s',
    '99999999999d',
    '1e400',
    'http://',
    'redis://x:1/?a=\n',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'bot\r\nX-Injected: 1',
    'name with spaces',
    'UPPER',
    'a'.repeat(65),
    '__proto__',
    'constructor',
    'SHOP_SIGNING_SECRET',
    'NOT_SET_ANYWHERE',
    2 ** 53 + 1,
    Number.MAX_SAFE_INTEGER,
  ),
);
const value: fc.Arbitrary<Json> = fc.letrec<{ json: Json }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar as fc.Arbitrary<Json>,
    fc.array(tie('json'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.string(), fc.constantFrom('__proto__', 'id', 'url')), tie('json'), {
      maxKeys: 4,
    }),
  ),
})).json;

/** One edit at a random place of the document: set a value, delete a key, add an unknown one. */
const edit = fc.record({
  path: fc.array(fc.oneof(fc.nat({ max: 6 }), fc.string({ maxLength: 20 })), {
    minLength: 1,
    maxLength: 5,
  }),
  kind: fc.constantFrom('set', 'delete', 'add'),
  value,
});

function applyEdit(doc: Json, e: { path: (number | string)[]; kind: string; value: Json }): Json {
  let node: Json = doc;
  const keys = e.path;
  for (let i = 0; i < keys.length - 1; i++) {
    if (node === null || typeof node !== 'object') return doc;
    const children: Json[] = Array.isArray(node) ? node : Object.values(node);
    if (children.length === 0) break;
    const key = keys[i] as number | string;
    const next: Json | undefined = Array.isArray(node)
      ? node[Number(key) % node.length]
      : typeof key === 'number'
        ? children[key % children.length]
        : (node as Record<string, Json>)[key];
    if (next === undefined) break;
    node = next;
  }
  if (node === null || typeof node !== 'object') return doc;
  const last = keys[keys.length - 1] as number | string;
  if (Array.isArray(node)) {
    const index = node.length ? Number(last) % (node.length + 1) : 0;
    if (e.kind === 'delete') node.splice(index, 1);
    else node[Number.isInteger(index) ? index : 0] = e.value;
    return doc;
  }
  const existing = Object.keys(node);
  const key =
    e.kind === 'add' || existing.length === 0
      ? String(last)
      : (existing[
          Number(typeof last === 'number' ? last : last.length) % existing.length
        ] as string);
  if (e.kind === 'delete') delete node[key];
  else
    Object.defineProperty(node, key, {
      value: e.value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return doc;
}

/** Pieces YAML is made of, including the features a config must not use (tags, aliases, merges). */
const yamlToken = fc.constantFrom(
  'redis:',
  'bots:',
  'routes:',
  'clients:',
  'telegram:',
  '  ',
  '\n',
  '\t',
  '- ',
  ': ',
  'id: x',
  'url: redis://127.0.0.1:1',
  '&a ',
  '*a',
  '*missing',
  '<<: *a',
  '!!binary ',
  '!!set ',
  '!!js/function ',
  '!custom ',
  '{',
  '}',
  '[',
  ']',
  ',',
  '"',
  "'",
  '\\u0000',
  '# comment',
  '---',
  '...',
  '|',
  '>-',
  '? ',
  '%YAML 1.2',
  '\ufeff',
  '\u2028',
  '0x1F',
  '.inf',
  '~',
  'null',
  'yes',
  '1_000',
  '2001-12-14t21:59:43.10-05:00',
);

describe('config loader: arbitrary input (fuzz)', () => {
  // The yaml library reports a mapping key that is itself a collection with a process
  // warning (the key is stringified, and then refused as an unknown key); thousands of
  // random documents would fill the test output with them.
  beforeAll(() => jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined));
  afterAll(() => jest.restoreAllMocks());

  it('loads the unedited example (the edits below start from a valid file)', () => {
    const result = loadConfig({ path: writeFile(stringify(BASE)), env: ENV });
    expect(result).toMatchObject({ ok: true });
  });

  it('any text or bytes: problems or a config, never a throw', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 400 }),
          fc.uint8Array({ maxLength: 400 }).map((bytes) => Buffer.from(bytes)),
        ),
        (content) => checkLoad(writeFile(content)),
      ),
      fuzzParameters(300),
    );
  });

  it('YAML-ish token soup (anchors, aliases, tags, merges, flow and block styles)', () => {
    fc.assert(
      fc.property(fc.array(yamlToken, { maxLength: 60 }), (tokens) =>
        checkLoad(writeFile(tokens.join(''))),
      ),
      fuzzParameters(400),
    );
  });

  it('a valid config with random edits: wrong types, missing and unknown keys, odd values', () => {
    fc.assert(
      fc.property(fc.array(edit, { minLength: 1, maxLength: 4 }), (edits) => {
        let doc = structuredClone(BASE) as unknown as Json;
        for (const e of edits) doc = applyEdit(doc, e);
        checkLoad(writeFile(stringify(doc)));
      }),
      fuzzParameters(400),
    );
  });

  it('alias bombs and self-references answer with a problem', () => {
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      ...Array.from(
        { length: 9 },
        (_, i) =>
          `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(9)
            .fill(`*${String.fromCharCode(97 + i)}`)
            .join(',')}]`,
      ),
      'bots: *j',
    ].join('\n');
    for (const text of [bomb, 'bots: &a [*a]', 'routes: &r\n  - name: x\n    match: *r']) {
      const path = writeFile(text);
      checkLoad(path);
      expect(loadConfig({ path, env: ENV }).ok).toBe(false);
    }
  });
});
