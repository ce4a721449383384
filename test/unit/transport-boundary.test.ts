/**
 * The transport boundary, read from src/'s imports: outside src/kafka/kafkajs, nothing names a
 * kafkajs type; the kafkajs boundary (src/kafka/kafkajs/index.ts) gives the rest of src/ its
 * transport (and the admin on a kafkajs Admin), and everything else is src/kafka/transport's
 * types. eslint refuses `kafkajs` itself outside the boundary (eslint.config.mjs); this holds
 * what eslint cannot see: which names come through the boundary.
 */
import * as path from 'node:path';
import { namedImports, sourceFiles } from '../support/sourceImports';

const SRC = path.resolve(__dirname, '../../src');
const BOUNDARY = path.join(SRC, 'kafka', 'kafkajs');
const INDEX = path.join(BOUNDARY, 'index.ts');

/** What the boundary gives the processor's path: a transport on kafkajs, nothing of kafkajs. */
const TRANSPORT_EXPORTS = new Set(['kafkajsTransport', 'kafkajsAdmin', 'KafkajsTransportOptions']);

/**
 * Files that still take kafkajs' own client, types and helpers through the boundary: the client
 * library, the commands and the local services, not yet behind the transport. The list may only
 * shrink (docs/decisions.md 207).
 */
const NOT_YET_ON_THE_TRANSPORT = [
  'cli/simulate.ts',
  'cli/tail.ts',
  'cli/toolErrors.ts',
  'cli/topicReader.ts',
  'client/batchedProducer.ts',
  'client/client.ts',
  'client/inputProducer.ts',
  'client/spillWorker.ts',
  'client/verdicts.ts',
  'kafka/client.ts',
  'services/cluster/readiness.ts',
  'services/localKafka.ts',
];

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
  expect(names(path.join(SRC, 'cli', 'tail.ts'))).toContain('KafkaMessage');
  expect(names(path.join(SRC, 'cli', 'run.ts'))).toContain('kafkajsTransport');
});
