import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import nx from '@nx/eslint-plugin';
import prettier from 'eslint-config-prettier';

// Layering, top to bottom; a project imports only from the layers below its own.
//   app            main.ts and a root module: the platform's CoreModule plus features.
//   feature        ingress, dispatcher, gateway, admin: one Nest module each.
//   platform       what features run on: how a process boots (`platform`: listeners,
//                  limits, signals, CoreModule) and the outbound pacer (`pacing`).
//   observability  health, metrics and logging, which every layer above reports through.
//   shared         config, contracts, queue, routing, signing, telegram.
// So the platform never reaches into a feature (apps put the two together), and
// observability knows nothing of how a process boots.
// `testing` (the emulator and receiver) is only reachable from tests and tools.
const layers = [
  {
    sourceTag: 'type:app',
    onlyDependOnLibsWithTags: [
      'type:feature',
      'type:platform',
      'type:observability',
      'type:shared',
    ],
  },
  {
    sourceTag: 'type:feature',
    onlyDependOnLibsWithTags: ['type:platform', 'type:observability', 'type:shared'],
  },
  { sourceTag: 'type:platform', onlyDependOnLibsWithTags: ['type:observability', 'type:shared'] },
  { sourceTag: 'type:observability', onlyDependOnLibsWithTags: ['type:shared'] },
  { sourceTag: 'type:shared', onlyDependOnLibsWithTags: ['type:shared'] },
  { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:shared'] },
  { sourceTag: 'type:tool', onlyDependOnLibsWithTags: ['type:shared', 'type:testing'] },
];
const withTesting = layers.map((c) =>
  c.sourceTag === 'type:tool'
    ? c
    : { ...c, onlyDependOnLibsWithTags: [...c.onlyDependOnLibsWithTags, 'type:testing'] },
);
// Tests, and the test doubles each lib ships at its `testing` entry point.
const tests = [
  '**/*.spec.ts',
  '**/*.e2e-spec.ts',
  '**/*.fixture.ts',
  '**/test/**/*.ts',
  'libs/*/src/testing.ts',
  'libs/*/src/testing/**/*.ts',
];

export default tseslint.config(
  {
    ignores: [
      '**/node_modules',
      '**/dist',
      '.nx',
      'coverage',
      'tmp',
      'data',
      '**/*.js',
      '**/*.mjs',
      '**/*.cjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  { plugins: { '@nx': nx } },
  {
    files: ['**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        { enforceBuildableLibDependency: false, allow: [], depConstraints: layers },
      ],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: 'Read environment variables only in libs/config.',
        },
      ],
    },
  },
  {
    files: tests,
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        { enforceBuildableLibDependency: false, allow: [], depConstraints: withTesting },
      ],
      'no-restricted-syntax': 'off',
    },
  },
  // A file or function past these sizes mixes concerns; split it along a real seam.
  // Tests are exempt: a table of cases or one scenario may rightly run long.
  {
    files: ['**/*.ts'],
    // Generated code (the client's types, from the OpenAPI document) is as long as it is.
    ignores: [...tests, '**/*-test.ts', 'libs/*/src/generated/**'],
    rules: {
      'max-lines': ['error', { max: 400 }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    files: ['libs/config/**/*.ts', 'libs/testing/**/*.ts', 'tools/**/*.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  prettier,
);
