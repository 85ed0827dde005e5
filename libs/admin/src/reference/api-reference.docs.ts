import { ERROR_BODY, JSON_OBJECT, routeConfig, type ResponseDoc } from '@relaygram/openapi';

const NOT_ENABLED: ResponseDoc = {
  description: 'ADMIN_TOKEN is not set (or no such file)',
  schema: ERROR_BODY,
};

function file(operationId: string, summary: string, contentType: string, withParam = false) {
  return routeConfig({
    operationId,
    summary,
    tags: ['documents'],
    security: [],
    ...(withParam ? { params: { file: { type: 'string' } } } : {}),
    responses: {
      200: { description: summary, contentType, schema: { type: 'string' } },
      404: NOT_ENABLED,
    },
  });
}

/** The admin page's and the API reference's routes: they load without a token. */
export const REFERENCE_DOCS = {
  document: routeConfig({
    operationId: 'getManagementDocument',
    summary: 'This OpenAPI document',
    tags: ['documents'],
    security: [],
    responses: {
      200: { description: 'The OpenAPI 3.1 document', schema: JSON_OBJECT },
      404: NOT_ENABLED,
    },
  }),
  page: file('getApiReference', 'The API reference page (Swagger UI)', 'text/html'),
  script: file(
    'getApiReferenceScript',
    'A script of the API reference page',
    'text/javascript',
    true,
  ),
  style: file('getApiReferenceStyle', "The API reference page's stylesheet", 'text/css'),
  adminPage: file('getAdminPage', 'The admin page (it asks for the token)', 'text/html'),
  adminScript: file('getAdminPageScript', 'A script of the admin page', 'text/javascript', true),
  adminStyle: file('getAdminPageStyle', "The admin page's stylesheet", 'text/css'),
};
