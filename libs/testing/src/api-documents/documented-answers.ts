import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import { request } from 'undici';
import type { OpenApiDocument } from './route-coverage';

/** An answer an e2e helper received, to hold against the document of its listener. */
export interface ApiAnswer {
  method: string;
  url: string;
  status: number;
  /** The Content-Type header, if any. */
  contentType?: string;
  /** The body, parsed when it is JSON. */
  body: unknown;
}

interface MediaType {
  schema?: object;
}
interface ResponseObject {
  content?: Record<string, MediaType>;
}
interface OperationObject {
  responses?: Record<string, ResponseObject>;
}

/** The calls checked: the REST API, the admin API and the health checks. */
const CHECKED = /^\/(api\/v1\/|admin\/api(\/|$)|healthz$|health\/)/;

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
const documents = new Map<string, Promise<OpenApiDocument | undefined>>();
const validators = new WeakMap<object, ValidateFunction>();

/**
 * Holds an answer against the OpenAPI document the app serves for that listener (the
 * document is fetched once per origin): its status must be documented for the
 * operation, and its JSON body must match that status's schema. Throws, naming the
 * call and the mismatch, when not. Test-only: the apps never validate their answers.
 */
export async function expectDocumentedAnswer(answer: ApiAnswer): Promise<void> {
  const url = new URL(answer.url);
  if (!CHECKED.test(url.pathname)) return;
  const problem = await answerProblem(answer, url);
  if (problem) {
    throw new Error(
      `${answer.method} ${url.pathname} answered ${answer.status}, which its OpenAPI document does not allow: ${problem}\nbody: ${JSON.stringify(answer.body)?.slice(0, 500)}`,
    );
  }
}

/** What is wrong with an answer, or undefined when the document allows it. */
export async function answerProblem(
  answer: ApiAnswer,
  url = new URL(answer.url),
): Promise<string | undefined> {
  const documentPath = url.pathname.startsWith('/admin/')
    ? '/admin/openapi.json'
    : '/api/v1/openapi.json';
  let document = await documentOf(url.origin, documentPath);
  // Without ADMIN_TOKEN the admin API and its document do not exist: nothing to hold to.
  if (!document) return undefined;
  let operation = findOperation(document, answer.method, url.pathname);
  if (!operation) {
    // Another app may have taken this port since the document was fetched.
    documents.delete(`${url.origin}${documentPath}`);
    document = await documentOf(url.origin, documentPath);
    operation = document && findOperation(document, answer.method, url.pathname);
  }
  // An unknown path answers 404 without being an operation; the route-coverage tests
  // are what hold the served routes to the document.
  if (!operation) return undefined;
  const responses = operation.responses ?? {};
  const response =
    responses[String(answer.status)] ??
    responses[`${String(answer.status)[0]}XX`] ??
    responses.default;
  if (!response) return `status ${answer.status} is not documented`;
  const json = answer.contentType === undefined || /json/i.test(answer.contentType);
  if (!json) return undefined;
  const schema = response.content?.['application/json']?.schema;
  if (!schema) return undefined;
  let validate = validators.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    validators.set(schema, validate);
  }
  if (validate(answer.body)) return undefined;
  return ajv.errorsText(validate.errors, { dataVar: 'body' });
}

function documentOf(origin: string, path: string): Promise<OpenApiDocument | undefined> {
  const key = `${origin}${path}`;
  let document = documents.get(key);
  if (!document) {
    document = (async () => {
      const res = await request(key);
      if (res.statusCode === 404 && path.startsWith('/admin/')) {
        await res.body.dump();
        return undefined;
      }
      if (res.statusCode !== 200) {
        await res.body.dump();
        throw new Error(`${key} answered ${res.statusCode}: no OpenAPI document to check against`);
      }
      return (await res.body.json()) as OpenApiDocument;
    })();
    documents.set(key, document);
    // Neither a failure nor an app without ADMIN_TOKEN is kept: the next app on this
    // port may serve the document.
    document.then(
      (found) => found === undefined && documents.delete(key),
      () => documents.delete(key),
    );
  }
  return document;
}

/** The operation whose path template matches, the most literal one when several do. */
function findOperation(
  document: OpenApiDocument,
  method: string,
  pathname: string,
): OperationObject | undefined {
  let best: { operation: OperationObject; literal: number } | undefined;
  for (const [template, item] of Object.entries(document.paths ?? {})) {
    const operation = (item as Record<string, OperationObject>)[method.toLowerCase()];
    if (!operation) continue;
    const pattern = template
      .split(/(\{[^}]+\})/)
      .map((part) => (part.startsWith('{') ? '[^/]+' : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
      .join('');
    if (!new RegExp(`^${pattern}$`).test(pathname)) continue;
    const literal = template.replace(/\{[^}]+\}/g, '').length;
    if (!best || literal > best.literal) best = { operation, literal };
  }
  return best?.operation;
}
