import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApp, type RunningApp } from '@relaygram/platform';
import { discardLogs, testAppEnv, workspaceRoot, writeTestConfig } from '@relaygram/testing';
import { request } from 'undici';
import { StandaloneAppModule } from '../src/app.module';

const TYPES_FILE = join(workspaceRoot(), 'libs/client/src/generated/public-api.ts');
/** `npm run client:generate` sets it: the test then writes the types instead of comparing. */
const UPDATE = process.env.UPDATE_CLIENT_TYPES === '1';

/** The standalone process serves every public route, so its document is the client's. */
async function publicDocument(): Promise<object> {
  const config = writeTestConfig();
  let running: RunningApp | undefined;
  try {
    running = await startApp(
      { service: 'standalone', module: (boot) => StandaloneAppModule.forRoot(boot) },
      { env: testAppEnv(config.path), signals: false, logDestination: discardLogs() },
    );
    const res = await request(`${running.url}/api/v1/openapi.json`);
    return (await res.body.json()) as object;
  } finally {
    await running?.close();
    config.remove();
  }
}

type Operation = { responses?: Record<string, { headers?: Record<string, unknown> }> };

/**
 * The document as the client's types see it: without the answers of a REST call sent
 * with `Prefer: respond-async` (those documenting `Preference-Applied`). The caller
 * asks for them, so a call without the header always answers Telegram's result; left
 * in, every REST row's `data` would be a union a caller must narrow. Typed async sends
 * use `POST .../outbox`.
 */
function clientDocument(document: object): object {
  const copy = structuredClone(document) as { paths?: Record<string, Record<string, Operation>> };
  for (const item of Object.values(copy.paths ?? {})) {
    for (const operation of Object.values(item)) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        if (response.headers && 'Preference-Applied' in response.headers) {
          delete operation.responses![status];
        }
      }
    }
  }
  return copy;
}

/**
 * openapi-typescript's own command, formatted by prettier's as the repository formats
 * its code: both are ES modules, run by Node rather than Jest's CommonJS loader.
 */
function generatedTypes(document: object): string {
  const dir = mkdtempSync(join(tmpdir(), 'relaygram-client-'));
  let text: string;
  try {
    writeFileSync(join(dir, 'public.json'), JSON.stringify(document));
    const cli = join(workspaceRoot(), 'node_modules/openapi-typescript/bin/cli.js');
    text = execFileSync(process.execPath, [cli, join(dir, 'public.json')], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const prettier = join(workspaceRoot(), 'node_modules/prettier/bin/prettier.cjs');
  return execFileSync(process.execPath, [prettier, '--stdin-filepath', TYPES_FILE], {
    input: text,
    encoding: 'utf8',
  });
}

describe('@relaygram/client', () => {
  it('has types generated from the current public document (npm run client:generate)', async () => {
    const types = generatedTypes(clientDocument(await publicDocument()));
    if (UPDATE) writeFileSync(TYPES_FILE, types);
    expect(readFileSync(TYPES_FILE, 'utf8')).toBe(types);
  });
});
