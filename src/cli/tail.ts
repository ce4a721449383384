/**
 * `compaction-guard tail [verdicts|spill-requests|audit|dlq|all]`: the processor's output topics,
 * read_committed, Avro decoded through the registry, one line per record (or `audit --json`'s
 * objects). On-call reads a verdict without writing code.
 */
import { Command } from 'commander';
import type { InRecord } from '../kafka/transport';
import { ConfigError, type Config } from '../config/config';
import { checkKafkaSecurity, kafkaClient } from '../kafka/client';
import { RegistryCodec } from '../registry/codec';
import { type OutputKind, OutputDecoder } from '../registry/outputDecoder';
import { addConnectionOptions, kafkaConnection, toolLogger } from './connection';
import { readTopics } from './topicReader';
import { type TailRecord, formatLine, jsonRecord, sessionOf } from './tailFormat';
import { TOOL_FAILURES, reportingFailures } from './failures';

export const STREAMS = ['verdicts', 'spill-requests', 'audit', 'dlq', 'all'] as const;
export type Stream = (typeof STREAMS)[number];

type TopicKind = OutputKind | 'dead-letter';

function topicsOf(stream: Stream, c: Config): Map<string, TopicKind> {
  const all: [Stream, string, TopicKind][] = [
    ['verdicts', c.verdictTopic, 'verdict'],
    ['spill-requests', c.spillTopic, 'spill-request'],
    ['audit', c.auditTopic, 'audit'],
    ['dlq', c.dlqTopic, 'dead-letter'],
  ];
  return new Map(
    all.filter(([s]) => stream === 'all' || s === stream).map(([, t, k]) => [t, k] as const),
  );
}

function headers(m: InRecord): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(m.headers ?? {})) {
    const one = Array.isArray(v) ? v[0] : v;
    if (one !== undefined) out[k] = Buffer.isBuffer(one) ? one.toString('utf8') : String(one);
  }
  return out;
}

export interface TailOptions {
  session?: string;
  fromBeginning: boolean;
  follow: boolean;
  json: boolean;
}

export async function tail(
  stream: Stream,
  flags: Record<string, string | undefined>,
  o: TailOptions,
  out: NodeJS.WritableStream = process.stdout,
): Promise<void> {
  const { config } = kafkaConnection('tail', flags);
  const log = toolLogger(flags);
  // A wrong KAFKA_BROKERS fails in seconds, naming the setting, not after a minute of retries.
  await checkKafkaSecurity(config.brokers, `${config.clientId}-tail`, log, config);
  const kafka = await kafkaClient(config.brokers, `${config.clientId}-tail`, log, config);
  const codec = RegistryCodec.fromConfig(config);
  const decoder = new OutputDecoder(codec.registry);
  const kinds = topicsOf(stream, config);
  const reader = await readTopics(kafka, [...kinds.keys()], {
    fromBeginning: o.fromBeginning,
    follow: o.follow,
    groupPrefix: `${config.clientId}-tail`,
    onMessage: async (topic, partition, m) => {
      const kind = kinds.get(topic)!;
      let record: TailRecord;
      if (kind === 'dead-letter') {
        record = {
          record: 'dead-letter',
          value: {
            key: m.key?.toString('utf8') ?? null,
            value: m.value,
            headers: headers(m),
            timestamp: Number(m.timestamp),
          },
        };
      } else {
        try {
          record = await decoder.decode(kind, m.value ?? Buffer.alloc(0));
        } catch (e) {
          log.warn(
            { topic, partition, offset: m.offset, error: (e as Error).message },
            'record skipped: cannot decode',
          );
          process.stderr.write(
            `compaction-guard tail: ${topic}[${partition}]@${m.offset}: cannot decode: ${(e as Error).message}\n`,
          );
          return;
        }
      }
      if (o.session !== undefined && sessionOf(record) !== o.session) return;
      if (!out.writable) return;
      out.write((o.json ? JSON.stringify(jsonRecord(record)) : formatLine(record)) + '\n');
    },
  });
  const stop = () => void reader.stop();
  // `tail | head`: the reader went away, which ends tail as Ctrl-C would.
  out.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    stop();
  });
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await reader.done;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    codec.close();
  }
}

export function tailCommand(): Command {
  const cmd = new Command('tail')
    .description(
      "Show the processor's output records (read_committed, Avro decoded): one line each, or --json.",
    )
    .argument('[stream]', `one of ${STREAMS.join(', ')}`, 'all')
    .option('--session <id>', 'only records of this session (dead letters: by key)')
    .option('--from-beginning', 'start at the oldest records (default: only new records)')
    .option('--follow', 'keep waiting for new records (the default)')
    .option('--no-follow', 'stop at the end offsets the topics had at start')
    .option('--json', 'one JSON object per line, as `audit --json` prints them');
  addConnectionOptions(cmd);
  cmd.addHelpText(
    'after',
    '\nWith no KAFKA_BROKERS it reads the embedded services of a running `npm start` (.cache/embedded.json).' +
      '\nExit status: 0 done or interrupted; 2 invalid arguments or configuration; 3 cannot connect or authenticate.',
  );
  return cmd.action(async (stream: string, opts: Record<string, string | boolean | undefined>) => {
    await reportingFailures('tail', TOOL_FAILURES, async () => {
      if (!(STREAMS as readonly string[]).includes(stream))
        throw new ConfigError(
          `stream: expected one of ${STREAMS.join(', ')}, got ${JSON.stringify(stream)}`,
        );
      const { session, fromBeginning, follow, json, ...flags } = opts;
      await tail(stream as Stream, flags as Record<string, string | undefined>, {
        session: session as string | undefined,
        fromBeginning: fromBeginning === true,
        follow: follow !== false,
        json: json === true,
      });
    });
  });
}
