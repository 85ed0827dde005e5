export * from './queue-names';
export * from './lanes';
export * from './outcomes';
export * from './redis-keys';
export * from './update-types';
export * from './outbound-keys';
export * from './error-message';
