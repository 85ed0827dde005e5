import 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's part of the OpenAPI documents. */
    openapi?: RouteDoc | CatchAllDoc;
  }
}

/** A JSON Schema (2020-12, the dialect of OpenAPI 3.1). */
export type JsonSchema = { readonly [keyword: string]: unknown };

/** One answer of a route: a status, what it means, its body and headers. */
export interface ResponseDoc {
  readonly description: string;
  /** The body's schema; absent for an answer without a body. */
  readonly schema?: JsonSchema;
  /** `application/json` unless said otherwise. */
  readonly contentType?: string;
  readonly headers?: Readonly<Record<string, JsonSchema & { description?: string }>>;
}

/** The body, by content type: each type the route parses, with its schema. */
export interface RequestBodyDoc {
  readonly content: Readonly<Record<string, JsonSchema>>;
  readonly description?: string;
}

/** A parameter: its schema plus OpenAPI's `description`. */
export type ParameterDoc = JsonSchema & { readonly description?: string };

/**
 * What a route says about itself in the OpenAPI documents. It travels in the route's
 * Fastify `config` (see `routeConfig`), never in its `schema`: Fastify would compile a
 * validator and a serializer from a schema and run them on every request, and the
 * documents must cost the routes nothing.
 */
export interface RouteDoc {
  /** Unique in its document; ignored when `methods` names one per method. */
  readonly operationId: string;
  readonly summary: string;
  readonly description?: string;
  readonly tags: readonly string[];
  /** OpenAPI security requirements; `[]` states that the route needs no credentials. */
  readonly security?: ReadonlyArray<Readonly<Record<string, readonly string[]>>>;
  /** Every path parameter of the route's URL. */
  readonly params?: Readonly<Record<string, ParameterDoc>>;
  readonly query?: Readonly<Record<string, ParameterDoc>>;
  readonly headers?: Readonly<Record<string, ParameterDoc>>;
  readonly requiredHeaders?: readonly string[];
  readonly body?: RequestBodyDoc;
  readonly responses: Readonly<Record<string, ResponseDoc>>;
  /** Answers on the public and the management listener alike (health): in both documents. */
  readonly bothListeners?: boolean;
  /** The URL as documented, when the route's own is a wildcard (`/bot*`). */
  readonly documentedUrl?: string;
  /**
   * For a route registered for several HTTP methods: the ones documented, each with its
   * operation id (instead of `operationId`); the others answer as an unknown path does.
   */
  readonly methods?: Readonly<Record<string, string>>;
}

/**
 * A catch-all that answers 404 for paths no other route takes (its reason given): it is
 * left out of the documents, and the route-coverage tests accept it.
 */
export interface CatchAllDoc {
  readonly catchAll: string;
}

/** The key of a route's Fastify `config` that holds its RouteDoc. */
export const ROUTE_DOC = 'openapi';

/** The `config` of a documented Fastify route (or `@RouteConfig()` of a Nest handler). */
export function routeConfig(doc: RouteDoc | CatchAllDoc): { [ROUTE_DOC]: RouteDoc | CatchAllDoc } {
  return { [ROUTE_DOC]: doc };
}

export function routeDocOf(config: unknown): RouteDoc | CatchAllDoc | undefined {
  if (typeof config !== 'object' || config === null) return undefined;
  return (config as { [ROUTE_DOC]?: RouteDoc | CatchAllDoc })[ROUTE_DOC];
}

export function isCatchAll(doc: RouteDoc | CatchAllDoc | undefined): doc is CatchAllDoc {
  return doc !== undefined && 'catchAll' in doc;
}
