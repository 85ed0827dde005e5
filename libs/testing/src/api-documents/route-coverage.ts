import type { RouteOptions } from 'fastify';
import { isCatchAll, routeDocOf } from '@relaygram/openapi';

/** One operation of a document, `GET /api/v1/{botId}/...`. */
export type OperationKey = string;

interface DocumentOperation {
  operationId?: string;
  responses?: Record<string, { description?: string }>;
}

export type OpenApiDocument = {
  paths?: Record<string, Record<string, DocumentOperation>>;
};

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/** Every operation a document lists. */
export function documentOperations(
  document: OpenApiDocument,
): Map<OperationKey, DocumentOperation> {
  const operations = new Map<OperationKey, DocumentOperation>();
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item)) {
      if (HTTP_METHODS.has(method)) operations.set(`${method.toUpperCase()} ${path}`, operation);
    }
  }
  return operations;
}

/**
 * The operations the registered routes should appear as, per listener: a route's
 * documented URL (`:id` as `{id}`), and its documented methods or else all of them but
 * HEAD (Fastify adds a HEAD beside every GET; the documents leave HEAD out). Catch-alls
 * that answer 404 are left out, as the documents leave them out.
 */
export function expectedOperations(
  routes: readonly RouteOptions[],
  managementOnly: (url: string) => boolean,
): { public: Set<OperationKey>; management: Set<OperationKey> } {
  const expected = { public: new Set<OperationKey>(), management: new Set<OperationKey>() };
  for (const route of routes) {
    const doc = routeDocOf(route.config);
    if (isCatchAll(doc)) continue;
    const url = (doc?.documentedUrl ?? route.url).replace(/:(\w+)/g, '{$1}');
    const registered = (Array.isArray(route.method) ? route.method : [route.method]).map(String);
    const methods = doc?.methods ? Object.keys(doc.methods) : registered;
    for (const method of methods) {
      if (method === 'HEAD') continue;
      const key = `${method} ${url}`;
      if (managementOnly(route.url)) expected.management.add(key);
      else expected.public.add(key);
      if (doc?.bothListeners) expected.management.add(key);
    }
  }
  return expected;
}

/**
 * What is wrong between the routes a process serves and its document: a route missing
 * from it or listed without its own documentation (only @fastify/swagger's default
 * answer), or an operation no route serves.
 */
export function coverageProblems(
  expected: ReadonlySet<OperationKey>,
  document: OpenApiDocument,
): string[] {
  const listed = documentOperations(document);
  const problems: string[] = [];
  for (const key of expected) {
    const operation = listed.get(key);
    if (!operation) problems.push(`${key}: served, missing from the document`);
    else if (!operation.operationId) problems.push(`${key}: listed, but not documented`);
  }
  for (const key of listed.keys()) {
    if (!expected.has(key)) problems.push(`${key}: documented, but no route serves it`);
  }
  return problems;
}
