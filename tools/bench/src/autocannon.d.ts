// autocannon ships no types; this declares the part of its programmatic API the bench uses.
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  interface AutocannonRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
  }

  interface AutocannonRequestSpec extends AutocannonRequest {
    setupRequest?: (request: AutocannonRequest, context: object) => AutocannonRequest;
  }

  interface AutocannonOptions {
    url: string;
    connections?: number;
    pipelining?: number;
    duration?: number;
    amount?: number;
    timeout?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    requests?: AutocannonRequestSpec[];
    bailout?: number;
  }

  interface AutocannonResult {
    duration: number;
    start: Date;
    finish: Date;
    errors: number;
    timeouts: number;
    non2xx: number;
    requests: { total: number; average: number };
    statusCodeStats: Record<string, { count: number }>;
  }

  interface AutocannonInstance extends EventEmitter {
    stop(): void;
  }

  function autocannon(
    options: AutocannonOptions,
    callback: (error: Error | null, result: AutocannonResult) => void,
  ): AutocannonInstance;

  export = autocannon;
}
