/**
 * The transport boundary, read from src/'s imports: outside src/kafka/kafkajs, nothing names a
 * kafkajs type; the kafkajs boundary (src/kafka/kafkajs/index.ts) gives the rest of src/ its
 * transport (and the admin on a kafkajs Admin), and everything else is src/kafka/transport's
 * types. eslint refuses `kafkajs` itself outside the boundary (eslint.config.mjs); this holds
 * what eslint cannot see: which names come through the boundary. The same for the second client,
 * @platformatic/kafka: imported only under src/kafka/platformatic, which gives the rest of src/
 * its transport (loaded only when chosen) and the check of the Node version it needs.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { namedImports, sourceFiles } from '../support/sourceImports';

const SRC = path.resolve(__dirname, '../../src');
const BOUNDARY = path.join(SRC, 'kafka', 'kafkajs');
const INDEX = path.join(BOUNDARY, 'index.ts');

/**
 * What the boundary gives the rest of src/: a transport on kafkajs for the processor, and the
 * connector for the client library and the commands (their admin, producer, consumer and
 * failure codes); nothing of kafkajs.
 */
const TRANSPORT_EXPORTS = new Set([
  'kafkajsTransport',
  'kafkajsAdmin',
  'KafkajsTransportOptions',
  'kafkajsConnector',
  'kafkajsProbeCluster',
]);

/**
 * Files that still take kafkajs' own client, types and helpers through the boundary, not yet
 * behind the transport: none since the client library, the commands and the local services
 * moved. The list may only shrink (docs/decisions.md 207, 237).
 */
const NOT_YET_ON_THE_TRANSPORT: string[] = [];

const outside = sourceFiles(SRC).filter((f) => !f.startsWith(BOUNDARY + path.sep));

/** Each file outside the boundary with the names it takes from it that are not the transport. */
function kafkajsNamesByFile(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const f of outside) {
    const names = namedImports(f)
      .filter((i) => i.from.startsWith(BOUNDARY + path.sep))
      .flatMap((i) =>
        i.from === INDEX ? i.names.filter((n) => !TRANSPORT_EXPORTS.has(n)) : i.names,
      );
    if (names.length > 0) found.set(path.relative(SRC, f), names);
  }
  return found;
}

it('outside src/kafka/kafkajs, no file takes more than the transport from the kafkajs boundary, except those not yet moved', () => {
  expect(outside.length).toBeGreaterThan(150);
  const offenders = [...kafkajsNamesByFile().keys()].filter(
    (f) => !NOT_YET_ON_THE_TRANSPORT.includes(f),
  );
  expect(offenders).toEqual([]);
});

it('every file not yet on the transport still takes kafkajs names (a file moved leaves the list)', () => {
  expect([...kafkajsNamesByFile().keys()].sort()).toEqual([...NOT_YET_ON_THE_TRANSPORT].sort());
});

it('the processor path names only the transport', () => {
  const processorPath = [
    'processor.ts',
    'partition.ts',
    'transaction.ts',
    'restore.ts',
    'groupRestore.ts',
    'topics.ts',
  ].map((f) => path.join(SRC, 'kafka', f));
  for (const f of processorPath) {
    const fromBoundary = namedImports(f).filter((i) => i.from.startsWith(BOUNDARY + path.sep));
    expect({ file: path.relative(SRC, f), fromBoundary }).toEqual({
      file: path.relative(SRC, f),
      fromBoundary: [],
    });
  }
});

it('the check sees a kafkajs type taken through the boundary, and passes the transport', () => {
  const names = (f: string) =>
    namedImports(f).flatMap((i) => (i.from.startsWith(BOUNDARY + path.sep) ? i.names : []));
  const fixture = path.resolve(__dirname, '../fixtures/boundary/namesKafkajs.ts');
  expect(names(fixture)).toContain('KafkaMessage');
  expect(names(path.join(SRC, 'cli', 'run.ts'))).toContain('kafkajsTransport');
});

// ---- the second client: @platformatic/kafka, only under src/kafka/platformatic ----------------

const PLATFORMATIC = path.join(SRC, 'kafka', 'platformatic');
const outsidePlatformatic = sourceFiles(SRC).filter((f) => !f.startsWith(PLATFORMATIC + path.sep));

/** What the rest of src/ may take from src/kafka/platformatic: the transport and the Node check. */
const PLATFORMATIC_EXPORTS = new Set([
  'platformaticTransport',
  'platformaticClients',
  'requirePlatformaticNode',
]);

/** The names `file` takes from src/kafka/platformatic, statically or by `await import(…)`. */
function platformaticNames(file: string): string[] {
  const dynamic = [
    ...readFileSync(file, 'utf8').matchAll(
      /const\s*\{([^}]*)\}\s*=\s*await\s+import\('(\.[^']+)'\)/g,
    ),
  ].map((m) => ({
    from: path.resolve(path.dirname(file), m[2]!),
    names: m[1]!.split(',').map((n) => n.trim()),
  }));
  return [...namedImports(file), ...dynamic]
    .filter((i) => i.from.startsWith(PLATFORMATIC + path.sep))
    .flatMap((i) => i.names);
}

it('outside src/kafka/platformatic, no file imports @platformatic/kafka itself', () => {
  const importing = outsidePlatformatic.filter((f) =>
    /(from\s+|import\()'@platformatic\/kafka/.test(readFileSync(f, 'utf8')),
  );
  expect(importing.map((f) => path.relative(SRC, f))).toEqual([]);
});

it('outside src/kafka/platformatic, files take only the transport and the Node check from it', () => {
  const offenders = outsidePlatformatic.flatMap((f) =>
    platformaticNames(f)
      .filter((n) => !PLATFORMATIC_EXPORTS.has(n))
      .map((n) => `${path.relative(SRC, f)}: ${n}`),
  );
  expect(offenders).toEqual([]);
  // The check sees both kinds of import (run.ts loads the transport only when it is chosen).
  const run = platformaticNames(path.join(SRC, 'cli', 'run.ts'));
  expect(run).toEqual(expect.arrayContaining([...PLATFORMATIC_EXPORTS]));
});

it('the processor path takes nothing from src/kafka/platformatic', () => {
  for (const f of ['processor.ts', 'partition.ts', 'transaction.ts', 'producers.ts', 'restore.ts'])
    expect({ file: f, names: platformaticNames(path.join(SRC, 'kafka', f)) }).toEqual({
      file: f,
      names: [],
    });
});
