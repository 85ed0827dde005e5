import { randomBytes } from 'node:crypto';
import type { Writable } from 'node:stream';
import type { RouteOptions } from 'fastify';
import { request } from 'undici';
import { discardLogs, testAppEnv, type StartedApp } from '../app-test-kit';
import { writeTestConfig, type TestConfigFile } from '../test-config-file';
import { lintApiDocument } from './document-lint';
import { coverageProblems, expectedOperations, type OpenApiDocument } from './route-coverage';

export interface DocumentedAppStart {
  env: Record<string, string | undefined>;
  logDestination: Writable;
  /** Pass on as `startApp`'s `onRoute`: the suite sees every route the app registers. */
  onRoute: (route: RouteOptions) => void;
}

export interface DocumentedApp {
  /** The platform's rule: which paths answer on the management listener only. */
  managementOnly: (url: string) => boolean;
  start: (options: DocumentedAppStart) => Promise<StartedApp>;
}

async function fetchJson(url: string): Promise<{ status: number; body: unknown; text: string }> {
  const res = await request(url);
  const text = await res.body.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.statusCode, body, text };
}

/**
 * The OpenAPI tests every app has: started with an admin token, it serves a document
 * on each listener that lists every route it registered (each with its own
 * documentation) and nothing more, and both documents lint clean with Redocly's
 * recommended rules. `start` wires the app's module to `startApp`.
 */
export function describeApiDocuments(service: string, app: DocumentedApp): void {
  describe(`${service} app: OpenAPI documents`, () => {
    const adminToken = randomBytes(24).toString('base64url');
    const routes: RouteOptions[] = [];
    let running: StartedApp;
    let config: TestConfigFile;
    let publicDocument: { status: number; body: unknown; text: string };
    let managementDocument: { status: number; body: unknown; text: string };

    beforeAll(async () => {
      config = writeTestConfig();
      running = await app.start({
        env: testAppEnv(config.path, { ADMIN_TOKEN: adminToken }),
        logDestination: discardLogs(),
        onRoute: (route) => routes.push(route),
      });
      publicDocument = await fetchJson(`${running.url}/api/v1/openapi.json`);
      managementDocument = await fetchJson(`${running.adminUrl}/admin/openapi.json`);
    });
    afterAll(async () => {
      await running?.close();
      config?.remove();
    });

    it('serves the public document on the public listener, the management one on its own', async () => {
      expect(publicDocument.status).toBe(200);
      expect(managementDocument.status).toBe(200);
      expect(publicDocument.body).toMatchObject({ openapi: '3.1.0' });
      expect(managementDocument.body).toMatchObject({ openapi: '3.1.0' });
      const offPublic = await request(`${running.url}/admin/openapi.json`);
      expect(offPublic.statusCode).toBe(404);
      await offPublic.body.dump();
    });

    it('lists every route it serves, each documented, and no route it does not serve', () => {
      expect(routes.length).toBeGreaterThan(0);
      const expected = expectedOperations(routes, app.managementOnly);
      expect(coverageProblems(expected.public, publicDocument.body as OpenApiDocument)).toEqual([]);
      expect(
        coverageProblems(expected.management, managementDocument.body as OpenApiDocument),
      ).toEqual([]);
    });

    it('passes the linter with no error and no warning', async () => {
      expect(await lintApiDocument(publicDocument.body as object, 'public')).toEqual([]);
      expect(await lintApiDocument(managementDocument.body as object, 'management')).toEqual([]);
    });

    it('holds no secret', () => {
      for (const document of [publicDocument.text, managementDocument.text]) {
        expect(document).not.toContain(adminToken);
      }
    });
  });
}
