export * from './ingress.module';
