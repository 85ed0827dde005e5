'use strict';
// Jest's module system is CommonJS and cannot load ES modules with require(), as Node
// 20.19+ can. NestJS 12 and some of its dependencies ship only ES modules, so those
// packages are compiled to CommonJS for the tests. SWC leaves `import.meta` alone,
// which CommonJS cannot parse: it is rewritten to its CommonJS equivalents first
// (through `module`, since compiled code may declare its own `require`).
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const { createTransformer: createSwcTransformer } = require('@swc/jest');

// Cached transforms must be redone when this file changes.
const SELF = createHash('sha256').update(readFileSync(__filename)).digest('hex').slice(0, 12);

const IMPORT_META_URL = /\bimport\.meta\.url\b/g;
const IMPORT_META_RESOLVE = /\bimport\.meta\.resolve\(/g;
const IMPORT_META_DIRNAME = /\bimport\.meta\.dirname\b/g;
const IMPORT_META_FILENAME = /\bimport\.meta\.filename\b/g;

function rewriteImportMeta(source) {
  if (!source.includes('import.meta')) return source;
  return source
    .replace(IMPORT_META_URL, "module.require('node:url').pathToFileURL(__filename).href")
    .replace(
      IMPORT_META_RESOLVE,
      "((s) => module.require('node:url').pathToFileURL(module.require.resolve(s)).href)(",
    )
    .replace(IMPORT_META_DIRNAME, '__dirname')
    .replace(IMPORT_META_FILENAME, '__filename');
}

module.exports = {
  createTransformer(options) {
    const swc = createSwcTransformer(options);
    return {
      ...swc,
      process(source, filename, jestOptions) {
        return swc.process(rewriteImportMeta(source), filename, jestOptions);
      },
      processAsync(source, filename, jestOptions) {
        return swc.processAsync(rewriteImportMeta(source), filename, jestOptions);
      },
      getCacheKey(source, filename, jestOptions) {
        return `${SELF}:${swc.getCacheKey(source, filename, jestOptions)}`;
      },
    };
  },
};
