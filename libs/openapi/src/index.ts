export {
  ROUTE_DOC,
  isCatchAll,
  type CatchAllDoc,
  routeConfig,
  routeDocOf,
  type JsonSchema,
  type ParameterDoc,
  type RequestBodyDoc,
  type ResponseDoc,
  type RouteDoc,
} from './route-doc';
export {
  BOT_ID_PARAM,
  ERROR_BODY,
  JSON_OBJECT,
  SECURITY,
  SECURITY_SCHEMES,
  TELEGRAM_ERROR_BODY,
} from './common-schemas';
export { BROADCAST_FAILURE, BROADCAST_STATUS, BROADCAST_VIEW } from './broadcast-schemas';
export {
  apiDocument,
  apiDocumentJson,
  registerApiDocuments,
  type ApiDocumentsOptions,
  type Listener,
} from './api-documents';
