/** Two projects: `unit` (pure code, no services) and `integration` (real Kafka, registry,
 * Prometheus, started once by the global setup). `npm test` runs both. */
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.json', isolatedModules: true }];
module.exports = {
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform: { '^.+\\.ts$': tsJest },
      testMatch: ['<rootDir>/test/unit/**/*.test.ts'],
    },
  ],
};
