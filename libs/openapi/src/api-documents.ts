import fastifySwagger from '@fastify/swagger';
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import { SECURITY_SCHEMES } from './common-schemas';
import { isCatchAll, routeDocOf, type ParameterDoc, type RouteDoc } from './route-doc';

/** The two listeners of a Relaygram process, each with its own document. */
export type Listener = 'public' | 'management';

const DECORATOR: Readonly<Record<Listener, string>> = {
  public: 'relaygramPublicDocument',
  management: 'relaygramManagementDocument',
};

const INFO: Readonly<Record<Listener, { title: string; description: string }>> = {
  public: {
    title: 'Relaygram public API',
    description:
      "The public listener (PORT): Telegram's webhook endpoint, the REST API under /api/v1 " +
      'and the Bot API drop-in for services and bot frameworks, plus the health checks. ' +
      'Only the routes this process serves are listed: ingress, gateway and standalone ' +
      'differ.',
  },
  management: {
    title: 'Relaygram management API',
    description:
      'The management listener (ADMIN_PORT, bound to ADMIN_HOST): the admin API under ' +
      '/admin/api (Bearer ADMIN_TOKEN; without ADMIN_TOKEN everything under /admin answers ' +
      '404), Prometheus metrics and the health checks.',
  },
};

const TAGS: Readonly<Record<Listener, ReadonlyArray<{ name: string; description: string }>>> = {
  public: [
    {
      name: 'webhooks',
      description: 'Where Telegram posts updates: deduplicated and queued for the routes.',
    },
    {
      name: 'rest',
      description:
        'The REST API for services: one row per Bot API method, raw/{method}, and the outbox.',
    },
    { name: 'bot-api', description: 'The Bot API drop-in for bot frameworks.' },
    { name: 'health', description: 'Liveness, readiness and the summary; no token.' },
    { name: 'documents', description: 'This document.' },
  ],
  management: [
    { name: 'admin', description: 'Bots, routes and dead letters (Bearer ADMIN_TOKEN).' },
    { name: 'metrics', description: 'Prometheus scrape endpoint.' },
    { name: 'health', description: 'Liveness, readiness and the summary; no token.' },
    { name: 'documents', description: 'This document and its reference page.' },
  ],
};

export interface ApiDocumentsOptions {
  /** Paths served on the management listener only; every other path is public. */
  managementOnly: (url: string) => boolean;
}

/**
 * Collects every route the process registers into two OpenAPI 3.1 documents, one per
 * listener, with @fastify/swagger. Call it on the Fastify instance before any route is
 * added (routes added earlier are not seen). The documents are built on first request and
 * kept: routes carry their RouteDoc in their config and nothing is added to a request.
 */
export async function registerApiDocuments(
  fastify: FastifyInstance,
  options: ApiDocumentsOptions,
): Promise<void> {
  for (const listener of ['public', 'management'] as const) {
    // url → the methods documented, for routes registered for more methods than that.
    const methods = new Map<string, Readonly<Record<string, string>>>();
    await fastify.register(fastifySwagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          ...INFO[listener],
          version: '1.0.0',
          license: { name: 'MIT', identifier: 'MIT' },
        },
        // Relative: the document describes the listener it is fetched from.
        servers: [{ url: '/', description: `This process's ${listener} listener` }],
        tags: [...TAGS[listener]],
        components: { securitySchemes: SECURITY_SCHEMES as never },
      },
      decorator: DECORATOR[listener],
      transform: ({ url, route }) => documented(listener, url, route, options, methods),
      transformObject: (built) =>
        'openapiObject' in built ? keepMethods(built.openapiObject, methods) : built.swaggerObject,
    });
  }
}

function documented(
  listener: Listener,
  url: string,
  route: RouteOptions,
  options: ApiDocumentsOptions,
  methods: Map<string, Readonly<Record<string, string>>>,
): { schema: FastifySchema; url: string } {
  const doc = routeDocOf(route.config);
  if (isCatchAll(doc)) return { schema: HIDDEN, url };
  const management = options.managementOnly(url);
  const listed = listener === 'public' ? !management : management || doc?.bothListeners === true;
  if (!listed) return { schema: HIDDEN, url };
  // An undocumented route is listed with nothing but a default answer; the apps'
  // route-coverage tests name it.
  if (!doc) return { schema: {}, url };
  const documentedUrl = doc.documentedUrl ?? url;
  if (doc.methods) methods.set(documentedUrl.replace(/:(\w+)/g, '{$1}'), doc.methods);
  return { schema: fastifySchema(doc), url: documentedUrl };
}

type OpenApiObject = { paths?: Record<string, Record<string, { operationId?: string }>> };

function keepMethods<T>(openapiObject: T, methods: Map<string, Readonly<Record<string, string>>>) {
  const paths = (openapiObject as OpenApiObject).paths ?? {};
  for (const [url, documented] of methods) {
    const item = paths[url];
    if (!item) continue;
    for (const method of Object.keys(item)) {
      const operationId = documented[method.toUpperCase()];
      if (operationId === undefined) delete item[method];
      else item[method] = { ...item[method], operationId };
    }
  }
  return openapiObject;
}

const HIDDEN = { hide: true } as FastifySchema;

function fastifySchema(doc: RouteDoc): FastifySchema {
  const schema: Record<string, unknown> = {
    ...(doc.methods ? {} : { operationId: doc.operationId }),
    summary: doc.summary,
    tags: [...doc.tags],
    response: Object.fromEntries(
      Object.entries(doc.responses).map(([status, answer]) => [
        status,
        {
          description: answer.description,
          ...(answer.headers ? { headers: answer.headers } : {}),
          ...(answer.schema
            ? { content: { [answer.contentType ?? 'application/json']: { schema: answer.schema } } }
            : {}),
        },
      ]),
    ),
  };
  if (doc.description) schema.description = doc.description;
  if (doc.security) schema.security = doc.security;
  if (doc.params) schema.params = parameters(doc.params, Object.keys(doc.params));
  if (doc.query) schema.querystring = parameters(doc.query, []);
  if (doc.headers) schema.headers = parameters(doc.headers, doc.requiredHeaders ?? []);
  if (doc.body) {
    schema.body = {
      ...(doc.body.description ? { description: doc.body.description } : {}),
      content: Object.fromEntries(
        Object.entries(doc.body.content).map(([type, body]) => [type, { schema: body }]),
      ),
    };
  }
  return schema;
}

function parameters(
  properties: Readonly<Record<string, ParameterDoc>>,
  required: readonly string[],
): Record<string, unknown> {
  return { type: 'object', properties, required: [...required] };
}

const serialized = new WeakMap<FastifyInstance, Map<Listener, string>>();

/** A listener's document as JSON text, built once per process on first use. */
export function apiDocumentJson(fastify: FastifyInstance, listener: Listener): string {
  let texts = serialized.get(fastify);
  if (!texts) serialized.set(fastify, (texts = new Map()));
  let text = texts.get(listener);
  if (text === undefined) {
    text = JSON.stringify(apiDocument(fastify, listener));
    texts.set(listener, text);
  }
  return text;
}

/** A listener's document as @fastify/swagger builds it (it keeps the object it built). */
export function apiDocument(fastify: FastifyInstance, listener: Listener): object {
  const build = (fastify as unknown as Record<string, unknown>)[DECORATOR[listener]];
  if (typeof build !== 'function') {
    throw new Error('the OpenAPI documents were not registered on this Fastify instance');
  }
  return (build as () => object)();
}
