const fs = require('node:fs');
const path = require('node:path');

const swcrc = JSON.parse(fs.readFileSync(path.join(__dirname, '.swcrc'), 'utf8'));
delete swcrc.exclude;
delete swcrc.$schema;

/**
 * Packages that ship only ES modules (`"type": "module"`), NestJS 12 among them. Jest
 * loads modules as CommonJS, so these are compiled for the tests (see swc-transformer).
 */
function esmPackages() {
  const root = path.join(__dirname, 'node_modules');
  const names = [];
  for (const entry of fs.readdirSync(root)) {
    const candidates = entry.startsWith('@')
      ? fs.readdirSync(path.join(root, entry)).map((name) => `${entry}/${name}`)
      : [entry];
    for (const name of candidates) {
      try {
        const manifest = JSON.parse(fs.readFileSync(path.join(root, name, 'package.json'), 'utf8'));
        if (manifest.type === 'module') names.push(name);
      } catch {
        // not a package
      }
    }
  }
  return names;
}

const escape = (name) => name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const esm = esmPackages().map(escape).join('|');
const transformer = path.join(__dirname, 'tools/jest/swc-transformer.js');

/** @type {import('jest').Config} */
module.exports = {
  rootDir: __dirname,
  testEnvironment: 'node',
  roots: ['<rootDir>/apps', '<rootDir>/libs', '<rootDir>/tools'],
  testMatch: ['**/*.spec.ts', '**/*.e2e-spec.ts'],
  transform: {
    '^.+\\.ts$': [transformer, { ...swcrc, swcrc: false }],
    '^.+\\.m?js$': [
      transformer,
      {
        swcrc: false,
        jsc: { target: 'es2022', parser: { syntax: 'ecmascript' } },
        module: { type: 'commonjs' },
      },
    ],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${esm})/)`],
  moduleNameMapper: {
    '^@relaygram/([a-z-]+)$': '<rootDir>/libs/$1/src/index.ts',
    '^@relaygram/([a-z-]+)/testing$': '<rootDir>/libs/$1/src/testing.ts',
  },
  modulePathIgnorePatterns: ['<rootDir>/.*/dist/'],
  globalSetup: '<rootDir>/tools/jest/global-setup.ts',
  globalTeardown: '<rootDir>/tools/jest/global-teardown.ts',
  testTimeout: 30000,
  maxWorkers: '50%',
  // Test files that boot Nest apps leave some tens of MB behind each; a worker past
  // this is replaced between files rather than carried to an out-of-memory crash.
  workerIdleMemoryLimit: '1GB',
};
