/** The `compaction-guard` command line. */
import { Command } from 'commander';
import { openInput, runAudit } from './audit';
import { ENGINE_VERSION } from '../engine/version';
import { DEFAULTS, ENV_NAMES, ConfigError, kebab } from '../config/config';
import { runCommand } from './run';

export function buildProgram(): Command {
  const program = new Command();
  program
    .name('compaction-guard')
    .description('Refuses auto-compaction when a session\'s recovery floor cannot be proven.')
    .version(ENGINE_VERSION);

  program
    .command('audit')
    .description('Replay context-change events from a JSON-lines file through the engine (DESIGN §7).')
    .argument('<file>', 'JSON-lines file of events, or - for standard input')
    .option('--json', 'one JSON object per line: verdict, spill-request, audit or dead-letter records')
    .addHelpText(
      'after',
      '\nExit status: 0 when the file was read (refusals are results, not errors); 2 when it cannot be opened.',
    )
    .action(async (file: string, opts: { json?: boolean }) => {
      let input;
      try {
        input = await openInput(file, process.stdin);
      } catch (e) {
        process.stderr.write(`compaction-guard audit: cannot open ${file}: ${(e as Error).message}\n`);
        process.exitCode = 2;
        return;
      }
      await runAudit(input, process.stdout, { json: opts.json === true });
    });
  const run = program
    .command('run')
    .description(
      'Run the stream processor: agent.context-changes in, verdicts, spill requests and audit records out (exactly once). ' +
        'With no KAFKA_BROKERS, starts an embedded local Kafka and schema registry.',
    );
  for (const key of Object.keys(DEFAULTS) as (keyof typeof DEFAULTS)[]) {
    const d = DEFAULTS[key];
    const shown = Array.isArray(d) ? d.join(',') || '(embedded local Kafka)' : d === null ? '(embedded)' : String(d);
    run.option(`--${kebab(key)} <value>`, `env ${ENV_NAMES[key]} (default: ${shown})`);
  }
  run.action(async (opts: Record<string, string | undefined>) => {
    try {
      await runCommand(opts);
    } catch (e) {
      if (e instanceof ConfigError) {
        process.stderr.write(`compaction-guard run: invalid configuration: ${e.message}\n`);
        process.exitCode = 2;
        return;
      }
      throw e;
    }
  });
  return program;
}

export async function main(argv: string[]): Promise<void> {
  await buildProgram().parseAsync(argv);
}
