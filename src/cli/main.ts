/** The `compaction-guard` command line. */
import { Command } from 'commander';
import { openInputs, runAudit } from './audit';
import { ENGINE_VERSION } from '../engine/version';
import { DEFAULTS, ENV_NAMES, optionHelp, toolOptionHelp, toolSettings } from '../config/config';
import { loadKeyRing } from '../authority/ring';
import { MAX_SHOWN_LINE_BYTES, Replay, SessionsInPlace } from '../audit/replay';
import { engineOptions } from '../engine/fleet';
import { runCommand } from './run';
import { exitCodeHelp } from '../errors';
import {
  RUN_FAILURES,
  SIMULATE_FAILURES,
  TOOL_FAILURES,
  reportFailure,
  reportingFailures,
} from './failures';
import { simulate } from './simulate';
import { tailCommand } from './tail';
import { inspectCommand } from './inspect';
import { acknowledgeCommand } from './acknowledge';
import { keysCommand } from './keys';
import { aclsCommand } from './acls';
import { hookCommand } from './hook';
import { parseSimulateOptions } from './simulateOptions';

interface AuditFlags {
  json?: boolean;
  trustedKeys?: string;
  maxMessageBytes?: string;
}

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
    .option(
      '--trusted-keys <ring>',
      'decide with this trusted key ring (contract §4b), as a processor with the same CG_TRUSTED_KEYS_FILE does; default: no ring (signatures are not looked at, as under CG_ALLOW_UNSIGNED)',
    )
    .option(
      toolOptionHelp('inputMaxMessageBytes').flags,
      toolOptionHelp('inputMaxMessageBytes').description,
    )
    .addHelpText(
      'after',
      '\nA UTF-8 byte-order mark at the start of a file is skipped; a line that is not valid UTF-8, or whose JSON repeats a key, is a dead letter (as on Kafka).' +
        `\nA dead letter shows at most ${MAX_SHOWN_LINE_BYTES} bytes of its line; a longer one is cut, with the whole line's lineBytes and lineSha256.` +
        '\nExit status: 0 when the files were read (refusals are results, not errors); 2 when one cannot be opened or read, or the ring does not read (checked before any input is read).',
    )
    .action(async (files: string[], opts: AuditFlags) => {
      await reportingFailures('audit', TOOL_FAILURES, async () => {
        const flags = { maxMessageBytes: opts.maxMessageBytes };
        const maxLineBytes = toolSettings(process.env, flags).inputMaxMessageBytes;
        // The ring first: a ring that does not read stops it before any input is read.
        const trustedKeys = opts.trustedKeys === undefined ? null : loadKeyRing(opts.trustedKeys);
        const inputs = await openInputs(files, process.stdin);
        await runAudit(
          inputs,
          process.stdout,
          { json: opts.json === true, maxLineBytes },
          new Replay(new SessionsInPlace(engineOptions({ trustedKeys }))),
        );
      });
    });
  const run = program
    .command('run')
    .description(
      'Run the stream processor: agent.context-changes in, verdicts, spill requests and audit records out (exactly once). ' +
        'With no KAFKA_BROKERS, starts an embedded local Kafka and schema registry.',
    );
  for (const key of Object.keys(DEFAULTS) as (keyof typeof DEFAULTS)[]) {
    const { flags, description } = optionHelp(key);
    run.option(flags, description);
  }
  run.addHelpText(
    'after',
    '\nSecrets (*_PASSWORD, CG_HTTP_SESSIONS_TOKEN) can be read from a file named by <ENV>_FILE; they are never logged.' +
      '\nSIGHUP re-reads CG_TRUSTED_KEYS_FILE (rotate or revoke keys without a restart; a ring that does not read keeps the keys in force).' +
      '\nA failed start-up prints one line (the setting, what was tried, what to do; the stack with CG_LOG_LEVEL=debug).' +
      `\nExit status:\n${exitCodeHelp()}`,
  );
  run.action(async (opts: Record<string, string | undefined>) => {
    try {
      await runCommand(opts);
    } catch (e) {
      const level = opts.logLevel ?? process.env[ENV_NAMES.logLevel] ?? '';
      const debug = level === 'debug' || level === 'trace';
      process.exitCode = reportFailure('run', e, RUN_FAILURES, debug, (s) =>
        process.stderr.write(s),
      );
      // Whatever start-up left (a kafkajs retry timer, a socket) must not keep the process up.
      process.exit();
    }
  });
  program
    .command('simulate')
    .description(
      'Produce a deterministic simulated fleet of agent sessions to the input topic (demos, tests, benchmarks).',
    )
    .option(optionHelp('brokers').flags, optionHelp('brokers', 'a running `npm start`').description)
    .option(
      optionHelp('registryUrl').flags,
      optionHelp('registryUrl', 'a running `npm start`; required for --format avro').description,
    )
    .option(optionHelp('inputTopic').flags, optionHelp('inputTopic').description)
    .option('--sessions <n>', 'sessions live at once', '200')
    .option('--events <n>', 'total events to produce', '100000')
    .option(
      '--seed <n>',
      'PRNG seed, 0 to 4294967295: with --replay and --session-prefix, the same seed gives the same events',
      '1',
    )
    .option('--rate <n>', 'events per second', '2000')
    .option(
      '--faulty-share <x>',
      'share of orchestrators (0 to 1) that truncate before compacting',
      '0.1',
    )
    .option(
      '--no-spill-ack',
      'faulty orchestrators do not answer spill requests with SpillCompleted',
    )
    .option('--format <fmt>', 'avro (registry wire format) or json', 'avro')
    .option(toolOptionHelp('signingKeyFile').flags, toolOptionHelp('signingKeyFile').description)
    .option(
      '--session-prefix <p>',
      'session ids are <p>-<n> (default: sim-<unique per run>, so a second run is new sessions, not a replay of the first)',
    )
    .option(
      '--replay',
      "stamp occurredAt from the model's clock (2026-01-01, 1 ms per event) instead of the wall clock at send time; a processor frees sessions idle longer than CG_IDLE_MS + CG_SWEEP_DELAY_MS by wall clock, so give it a CG_IDLE_MS longer than the events' age",
    )
    .addHelpText(
      'after',
      '\nA failure prints one line naming its code.' +
        '\nExit status: 0 done or stopped by SIGINT/SIGTERM; 2 invalid options or configuration (the input topic missing included); 3 cannot connect or authenticate.',
    )
    .action(async (opts: Record<string, string | boolean | undefined>) => {
      await reportingFailures('simulate', SIMULATE_FAILURES, async () => {
        await simulate(
          {
            brokers: opts.brokers as string | undefined,
            registryUrl: opts.registryUrl as string | undefined,
            inputTopic: opts.inputTopic as string | undefined,
            key: opts.key as string | undefined,
          },
          parseSimulateOptions(opts),
        );
      });
    });
  // On-call commands (prometheus/RUNBOOK.md), each in its own file.
  program.addCommand(tailCommand()).addCommand(inspectCommand()).addCommand(acknowledgeCommand());
  program.addCommand(keysCommand());
  program.addCommand(aclsCommand());
  // Agent integrations run as a command (Claude Code's hooks).
  program.addCommand(hookCommand());
  return program;
}

export async function main(argv: string[]): Promise<void> {
  await buildProgram().parseAsync(argv);
}
