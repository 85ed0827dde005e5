// The multi-process suites: a Redis Cluster, and the scale-out run. They start their own
// Redis servers and run the built apps (`npm run build` first), so `npm test` leaves
// them out; `npm run test:cluster` and `npm run test:scale` run them.
const path = require('node:path');
const base = require('../../jest.config.js');

const root = path.join(__dirname, '..', '..');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  rootDir: root,
  roots: ['<rootDir>/tools/e2e'],
  testMatch: ['**/*.cluster-test.ts', '**/*.scale-test.ts'],
  globalSetup: undefined,
  globalTeardown: undefined,
  maxWorkers: 1,
  testTimeout: 180000,
};
