export { GatewayModule } from './gateway.module';
export type { GatewayOptions } from './gateway.options';
export { isReservedMethod, hasRedirectingMethod } from './access/method-rules';
export { REST_PREFIX } from './rest/rest-api.routes';
