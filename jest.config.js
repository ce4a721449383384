/** Three projects: `unit` (pure code, no services), `integration` (real Kafka, registry,
 * Prometheus, started once by the global setup) and `cluster` (a local 3-node cluster of its
 * own). `npm test` runs all three. */
// Transpile only (tsconfig's isolatedModules): `npm run typecheck` checks the types once.
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.json' }];
// The AI SDK (`ai` 7.x and its own packages) and @platformatic/kafka (with its own packages
// and scule) ship ES modules only. Node 22 loads them from CommonJS by itself (require(esm)),
// jest's module loader does not before Node 24.9: jest compiles them to CommonJS (zod: the
// ESM files of it that the AI SDK imports), `import.meta.url` included
// (test/support/esmToCjsTransformer.cjs).
const ESM_ONLY = '(ai|@ai-sdk/[^/]+|@workflow/serde|zod|@platformatic/[^/]+|scule)';
const esmToCjs = [
  '<rootDir>/test/support/esmToCjsTransformer.cjs',
  { tsconfig: { allowJs: true, module: 'commonjs', target: 'ES2022', sourceMap: false } },
];
const transform = {
  '^.+\\.ts$': tsJest,
  [`/node_modules/${ESM_ONLY}/.+\\.js$`]: esmToCjs,
};
const transformIgnorePatterns = [`/node_modules/(?!${ESM_ONLY}/)`];
module.exports = {
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform,
      transformIgnorePatterns,
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
    },
    {
      displayName: 'integration',
      testEnvironment: 'node',
      transform,
      transformIgnorePatterns,
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/integration/cluster/'],
      // Starts Kafka + registry (or reuses KAFKA_BROKERS / SCHEMA_REGISTRY_URL) only when a test
      // of this project is selected; see src/services/index.ts.
      globalSetup: '<rootDir>/test/integration/globalSetup.ts',
      globalTeardown: '<rootDir>/test/integration/globalTeardown.ts',
      // Real brokers: group joins and transactions take seconds. (A project-level `testTimeout`
      // is ignored by Jest 30, hence a setup file calling jest.setTimeout.)
      setupFilesAfterEnv: ['<rootDir>/test/integration/setupTimeout.ts'],
      // maxWorkers is a global option in Jest (not per project); integration tests use unique
      // topic/group/subject names, so they are safe to run in parallel workers anyway.
    },
    {
      // One file, one cluster (3 JVMs): `npx jest --selectProjects cluster`. Its own services:
      // the cluster, and a registry unless SCHEMA_REGISTRY_URL is given.
      displayName: 'cluster',
      testEnvironment: 'node',
      transform,
      transformIgnorePatterns,
      testMatch: ['<rootDir>/test/integration/cluster/**/*.test.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/integration/setupTimeout.ts'],
    },
  ],
};
