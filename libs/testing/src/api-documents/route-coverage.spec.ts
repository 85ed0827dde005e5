import type { RouteOptions } from 'fastify';
import { routeConfig } from '@relaygram/openapi';
import { coverageProblems, expectedOperations } from './route-coverage';

const doc = (operationId: string) =>
  routeConfig({ operationId, summary: operationId, tags: ['t'], responses: {} });

function route(method: string | string[], url: string, config?: object): RouteOptions {
  return { method, url, config, handler: () => undefined } as unknown as RouteOptions;
}

const managementOnly = (url: string) => url.startsWith('/admin');

describe('route coverage', () => {
  const routes = [
    route('GET', '/things/:id', doc('getThing')),
    route('HEAD', '/things/:id', doc('getThing')),
    route('GET', '/admin/x', doc('getX')),
    route(['GET', 'POST', 'PUT'], '/bot*', {
      openapi: {
        ...doc('bot').openapi,
        methods: { GET: 'botGet', POST: 'botPost' },
        documentedUrl: '/bot{token}/{method}',
      },
    }),
    route(['GET', 'POST'], '/admin/*', routeConfig({ catchAll: '404' })),
  ];
  const expected = expectedOperations(routes, managementOnly);
  const documented = {
    paths: {
      '/things/{id}': { get: { operationId: 'getThing' } },
      '/bot{token}/{method}': { get: { operationId: 'botGet' }, post: { operationId: 'botPost' } },
    },
  };

  it('expects each route per listener, without HEAD, catch-alls or undocumented methods', () => {
    expect([...expected.public].sort()).toEqual([
      'GET /bot{token}/{method}',
      'GET /things/{id}',
      'POST /bot{token}/{method}',
    ]);
    expect([...expected.management]).toEqual(['GET /admin/x']);
  });

  it('finds nothing wrong when the document lists exactly the routes', () => {
    expect(coverageProblems(expected.public, documented)).toEqual([]);
  });

  it('names a route missing from the document', () => {
    const { '/things/{id}': _gone, ...rest } = documented.paths;
    expect(coverageProblems(expected.public, { paths: rest })).toEqual([
      'GET /things/{id}: served, missing from the document',
    ]);
  });

  it('names a route listed without documentation of its own', () => {
    const paths = { ...documented.paths, '/things/{id}': { get: {} } };
    expect(coverageProblems(expected.public, { paths })).toEqual([
      'GET /things/{id}: listed, but not documented',
    ]);
  });

  it('names an operation no route serves', () => {
    const paths = { ...documented.paths, '/gone': { delete: { operationId: 'gone' } } };
    expect(coverageProblems(expected.public, { paths })).toEqual([
      'DELETE /gone: documented, but no route serves it',
    ]);
  });
});
