/** The `compaction-guard` command line. */
import { Command } from 'commander';
import { InputError, openInputs, runAudit } from './audit';
import { ENGINE_VERSION } from '../engine/version';
import { DEFAULTS, ENV_NAMES, ConfigError, SECRET_KEYS, kebab } from '../config/config';
import { runCommand } from './run';
import { KafkaSecurityError } from '../kafka/client';
import { RegistryAuthError } from '../registry/codec';
import { simulate } from './simulate';

export function buildProgram(): Command {
  const program = new Command();
  program
    .name('compaction-guard')
    .description("Refuses auto-compaction when a session's recovery floor cannot be proven.")
    .version(ENGINE_VERSION);

  program
    .command('audit')
    .description(
      'Replay context-change events from JSON-lines files through the engine (contract §7), in the order given, as one stream.',
    )
    .argument('<files...>', 'JSON-lines files of events, or - for standard input')
    .option(
      '--json',
      'one JSON object per line: verdict, spill-request, audit or dead-letter records',
    )
    .addHelpText(
      'after',
      '\nA UTF-8 byte-order mark at the start of a file is skipped; a line that is not valid UTF-8, or whose JSON repeats a key, is a dead letter (as on Kafka).' +
        '\nExit status: 0 when the files were read (refusals are results, not errors); 2 when one cannot be opened or read.',
    )
    .action(async (files: string[], opts: { json?: boolean }) => {
      try {
        const inputs = await openInputs(files, process.stdin);
        await runAudit(inputs, process.stdout, { json: opts.json === true });
      } catch (e) {
        if (!(e instanceof InputError)) throw e;
        process.stderr.write(`compaction-guard audit: ${e.message}\n`);
        process.exitCode = 2;
      }
    });
  const run = program
    .command('run')
    .description(
      'Run the stream processor: agent.context-changes in, verdicts, spill requests and audit records out (exactly once). ' +
        'With no KAFKA_BROKERS, starts an embedded local Kafka and schema registry.',
    );
  for (const key of Object.keys(DEFAULTS) as (keyof typeof DEFAULTS)[]) {
    const d = DEFAULTS[key];
    const shown = Array.isArray(d)
      ? d.join(',') || '(embedded local Kafka)'
      : d === null
        ? key === 'registryUrl'
          ? '(embedded)'
          : '(unset)'
        : String(d);
    const env = SECRET_KEYS.includes(key)
      ? `env ${ENV_NAMES[key]} or ${ENV_NAMES[key]}_FILE`
      : `env ${ENV_NAMES[key]}`;
    run.option(`--${kebab(key)} <value>`, `${env} (default: ${shown})`);
  }
  run.addHelpText(
    'after',
    '\nSecrets (*_PASSWORD, CG_HTTP_SESSIONS_TOKEN) can be read from a file named by <ENV>_FILE; they are never logged.' +
      '\nExit status: 2 invalid configuration; 3 Kafka authentication or TLS failed, or the registry rejected the credentials.',
  );
  run.action(async (opts: Record<string, string | undefined>) => {
    try {
      await runCommand(opts);
    } catch (e) {
      if (e instanceof ConfigError) {
        process.stderr.write(`compaction-guard run: invalid configuration: ${e.message}\n`);
        process.exitCode = 2;
        return;
      }
      if (e instanceof KafkaSecurityError || e instanceof RegistryAuthError) {
        // Wrong credentials or an untrusted certificate: retrying or a stack trace do not help.
        process.stderr.write(`compaction-guard run: ${e.message}\n`);
        process.exitCode = 3;
        return;
      }
      throw e;
    }
  });
  program
    .command('simulate')
    .description(
      'Produce a deterministic simulated fleet of agent sessions to the input topic (demos, tests, benchmarks).',
    )
    .option('--brokers <list>', 'env KAFKA_BROKERS (required)')
    .option('--registry-url <url>', 'env SCHEMA_REGISTRY_URL (required for --format avro)')
    .option('--input-topic <topic>', 'env CG_INPUT_TOPIC (default: agent.context-changes)')
    .option('--sessions <n>', 'sessions live at once', '200')
    .option('--events <n>', 'total events to produce', '100000')
    .option('--seed <n>', 'PRNG seed: the same seed gives the same events', '1')
    .option('--rate <n>', 'events per second', '2000')
    .option('--faulty-share <x>', 'share of orchestrators that truncate before compacting', '0.1')
    .option(
      '--no-spill-ack',
      'faulty orchestrators do not answer spill requests with SpillCompleted',
    )
    .option('--format <fmt>', 'avro (registry wire format) or json', 'avro')
    .action(async (opts: Record<string, string | boolean | undefined>) => {
      const num = (k: string) => {
        const n = Number(opts[k]);
        if (!Number.isFinite(n) || n <= 0)
          throw new ConfigError(
            `--${kebab(k)}: expected a positive number, got ${JSON.stringify(opts[k])}`,
          );
        return n;
      };
      const format = opts.format === 'json' ? 'json' : 'avro';
      await simulate(
        {
          brokers: opts.brokers as string | undefined,
          registryUrl: opts.registryUrl as string | undefined,
          inputTopic: opts.inputTopic as string | undefined,
        },
        {
          sessions: num('sessions'),
          events: num('events'),
          seed: num('seed'),
          rate: num('rate'),
          faultyShare: Number(opts.faultyShare),
          spillAck: opts.spillAck !== false,
          format,
        },
      );
    });
  return program;
}

export async function main(argv: string[]): Promise<void> {
  await buildProgram().parseAsync(argv);
}
