/**
 * The features a Relaygram process runs. Each name is also how the feature shows itself
 * to operators: its /healthz bot source and readiness check, the `component` of its log
 * lines, and the service a process that runs only it is called.
 */
export const Feature = Object.freeze({
  Ingress: 'ingress',
  Dispatcher: 'dispatcher',
  Gateway: 'gateway',
} as const);

export type FeatureName = (typeof Feature)[keyof typeof Feature];

export const FEATURE_NAMES: readonly FeatureName[] = Object.freeze(Object.values(Feature));

/** The process that runs every feature. */
export const STANDALONE_SERVICE = 'standalone';

/** What a process is called: the one feature it runs, or `standalone`. */
export type ServiceName = FeatureName | typeof STANDALONE_SERVICE;

export const SERVICE_NAMES: readonly ServiceName[] = Object.freeze([
  ...FEATURE_NAMES,
  STANDALONE_SERVICE,
]);
