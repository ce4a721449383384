/**
 * Every module of src/kafka/kafkajs/ works around a behaviour of one kafkajs version (named in
 * its first lines), and coordinatorCache.ts patches its internals: a different installed
 * version must be looked at before it runs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The kafkajs version every module of src/kafka/kafkajs/ was checked against. */
const CHECKED_AGAINST = '2.2.4';

function installedVersion(): string {
  const file = join(__dirname, '../../node_modules/kafkajs/package.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

describe('kafkajs version', () => {
  it(`is the one src/kafka/kafkajs/ was checked against (${CHECKED_AGAINST})`, () => {
    const installed = installedVersion();
    if (installed !== CHECKED_AGAINST)
      throw new Error(
        `kafkajs ${installed} is installed, src/kafka/kafkajs/ was checked against ${CHECKED_AGAINST}: ` +
          're-check every module in src/kafka/kafkajs/ against the new version (each names the ' +
          'upstream issue it works around; coordinatorCache.ts patches kafkajs internals), then ' +
          'update the pinned version in test/unit/kafkajs-version.test.ts (CHECKED_AGAINST).',
      );
  });

  it('is the version package.json pins', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(pkg.dependencies.kafkajs).toBe(CHECKED_AGAINST);
  });
});
