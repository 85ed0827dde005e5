import {
  apiDocumentJson,
  JSON_OBJECT,
  registerApiDocuments,
  routeConfig,
} from '@relaygram/openapi';
import type { FastifyInstance } from 'fastify';
import { isManagementOnlyPath } from './management-listener';

/** Where the public listener serves its OpenAPI document. */
export const PUBLIC_DOCUMENT_PATH = '/api/v1/openapi.json';

/**
 * The OpenAPI documents: registered before any route so that every route is seen, and
 * the public one served at PUBLIC_DOCUMENT_PATH (the admin module serves the management
 * one, behind the admin page's guard).
 */
export async function installApiDocuments(fastify: FastifyInstance): Promise<void> {
  await registerApiDocuments(fastify, { managementOnly: isManagementOnlyPath });
  fastify.get(
    PUBLIC_DOCUMENT_PATH,
    {
      config: routeConfig({
        operationId: 'getPublicDocument',
        summary: 'This OpenAPI document',
        tags: ['documents'],
        security: [],
        responses: { 200: { description: 'The OpenAPI 3.1 document', schema: JSON_OBJECT } },
      }),
    },
    (_request, reply) =>
      reply
        .type('application/json; charset=utf-8')
        .header('Cache-Control', 'no-cache')
        .send(apiDocumentJson(fastify, 'public')),
  );
}
