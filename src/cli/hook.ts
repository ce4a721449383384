/**
 * `compaction-guard hook claude-code`: the command Claude Code's hooks run (the hook's JSON on
 * stdin, the answer on stdout and in the exit status: ./hookRun), and `install` / `uninstall`,
 * which put that command into a Claude Code settings file and take it out again
 * (src/integrations/claude-code/settings.ts, settingsFile.ts).
 */
import path from 'node:path';
import { Command } from 'commander';
import { ConfigError } from '../config/settings';
import {
  GUARD_HOOKS,
  HOOK_TIMEOUT_SECONDS,
  type HookChange,
  guardHookSpecs,
  installGuardHooks,
  isGuardCommand,
  uninstallGuardHooks,
} from '../integrations/claude-code/settings';
import {
  type SettingsScope,
  readSettingsFile,
  settingsPath,
  writeSettingsFile,
} from '../integrations/claude-code/settingsFile';
import { TOOL_FAILURES, reportingFailures } from './failures';
import { runClaudeCodeHook } from './hookRun';

/** This package's launcher, absolute (from dist/cli or src/cli alike). */
const LAUNCHER = path.resolve(__dirname, '..', '..', 'bin', 'compaction-guard.js');

/** A word for a POSIX shell or PowerShell: double-quoted, with what a double quote lets through escaped. */
function quoted(word: string): string {
  return `"${word.replace(/[\\"$`]/g, (c) => `\\${c}`)}"`;
}

/**
 * The command install writes by default: this node and this launcher, absolute, so the hook runs
 * without PATH (Claude Code runs hooks through a shell with the user's environment, which may
 * have another node or none).
 */
export function defaultHookCommand(): string {
  return `${quoted(process.execPath)} ${quoted(LAUNCHER)} hook claude-code`;
}

export interface InstallFlags {
  project?: boolean;
  local?: boolean;
  user?: boolean;
  dir?: string;
  command?: string;
  /** Stop without `async`: each response waits for its turns to be reported. */
  stopWaits?: boolean;
}

function scopeOf(o: InstallFlags): SettingsScope {
  const chosen = (['project', 'local', 'user'] as const).filter((s) => o[s] === true);
  if (chosen.length > 1)
    throw new ConfigError(
      `--${chosen.join(', --')}: choose one settings file; nothing was written`,
    );
  return chosen[0] ?? 'project';
}

/** `PreCompact`, or `SessionStart (compact)` for a hook under a matcher. */
const hookName = (c: HookChange) => `${c.event}${c.matcher === undefined ? '' : ` (${c.matcher})`}`;

/** One line per change, each naming the file. */
function report(
  file: string,
  created: boolean,
  changes: HookChange[],
  command: string | null,
  out: (line: string) => void,
): void {
  const done = changes.filter((c) => c.change !== 'unchanged');
  if (created) out(`${file}: created`);
  for (const c of done) out(`${file}: ${c.change} the ${hookName(c)} hook`);
  if (done.length === 0)
    out(
      command === null
        ? `${file}: unchanged (no compaction-guard hook in it)`
        : `${file}: unchanged (the compaction-guard hooks are in it already)`,
    );
  else if (command !== null) out(`${file}: the hooks run: ${command}`);
}

/** `hook claude-code install`: the guard's hooks into the chosen settings file. */
export function installHooks(o: InstallFlags, out: (line: string) => void): void {
  const file = settingsPath(scopeOf(o), o.dir ?? process.cwd());
  const command = o.command ?? defaultHookCommand();
  if (command.trim() === '') throw new ConfigError('--command: empty; nothing was written');
  const read = readSettingsFile(file);
  const { settings, changes } = installGuardHooks(
    read.settings,
    command,
    isGuardCommand,
    guardHookSpecs({ stopInBackground: o.stopWaits !== true }),
  );
  const changed = changes.some((c) => c.change !== 'unchanged');
  if (changed || !read.exists) writeSettingsFile(read, settings);
  report(file, !read.exists, changes, command, out);
}

/** `hook claude-code uninstall`: the guard's hooks out of the chosen settings file. */
export function uninstallHooks(o: InstallFlags, out: (line: string) => void): void {
  const file = settingsPath(scopeOf(o), o.dir ?? process.cwd());
  const read = readSettingsFile(file);
  if (!read.exists) {
    out(`${file}: does not exist (nothing to remove)`);
    return;
  }
  const { settings, changes } = uninstallGuardHooks(read.settings, o.command);
  if (changes.length > 0) writeSettingsFile(read, settings);
  report(file, false, changes, null, out);
}

function settingsOptions(cmd: Command): Command {
  return cmd
    .option('--project', '<dir>/.claude/settings.json, shared with the repository (the default)')
    .option('--local', '<dir>/.claude/settings.local.json, this project, not committed')
    .option('--user', '~/.claude/settings.json, every project of this user')
    .option(
      '--dir <project>',
      'the project directory for --project and --local (default: the current directory)',
    );
}

const WHAT_IS_WRITTEN =
  `\nWhat is written: under "hooks", one group per event, ${GUARD_HOOKS.map((h) => (h.matcher === undefined ? h.event : `${h.event} (matcher "${h.matcher}")`)).join(', ')},` +
  ` each with {"type":"command","command":<the command>,"timeout":${HOOK_TIMEOUT_SECONDS}}` +
  ' (Stop\'s with "async":true: it runs in the background and only reports the new turns).' +
  "\nThe default command is this node and this package's bin/compaction-guard.js, absolute paths (no PATH needed)." +
  '\nEverything else in the file is kept as it was, other hooks on the same events included; a file that is not valid JSON is refused, never overwritten.';

export function hookCommand(): Command {
  const hook = new Command('hook').description(
    "The guard as an agent's compaction hook: Claude Code's PreCompact, PostCompact and SessionStart (compact) hooks, and Stop (in the background) to follow the transcript.",
  );
  const claude = hook
    .command('claude-code')
    .description(
      "Answer one Claude Code hook call: the hook's JSON on stdin, the answer on stdout and in the exit status (as Claude Code's hooks documentation defines). Claude Code runs it; install puts it into a settings file.",
    )
    .addHelpText(
      'after',
      '\nConnects as every client: KAFKA_BROKERS and SCHEMA_REGISTRY_URL (or CG_EMBEDDED_FILE), CG_SIGNING_KEY_FILE for signed spill answers; the CG_CLAUDE_* settings (docs/integration.md).' +
        '\nClaude Code passes its environment to the hook: set them where Claude Code starts (or in the settings file\'s "env").' +
        '\nLogs go to stderr; stdout is the answer only. With no verdict (guard down) a PreCompact is blocked (CG_CLAUDE_ON_GUARD_DOWN).' +
        '\nExit status: 0, the answer on stdout (a block is {"decision":"block","reason":…}, as Claude Code reads it).',
    )
    .action(async () => {
      process.exitCode = await runClaudeCodeHook({
        stdin: process.stdin,
        stdout: process.stdout,
        env: process.env,
      });
    });
  settingsOptions(
    claude
      .command('install')
      .description(
        "Add the guard's hooks to a Claude Code settings file (created if absent). Installing again changes nothing.",
      ),
  )
    .option(
      '--command <cmd>',
      'the command the hooks run instead of the absolute default, e.g. "npx compaction-guard hook claude-code" for a project that depends on the package',
    )
    .option(
      '--stop-waits',
      'install Stop without "async": each response waits (~1 s) for its turns to be reported; for one-shot `claude -p` runs, which kill an async hook at once',
    )
    .addHelpText(
      'after',
      WHAT_IS_WRITTEN +
        '\nOutput: one line per change, naming the file. Exit status: 0 done (or nothing to do); 2 invalid options, or a settings file that is not a JSON object or cannot be written (unchanged).',
    )
    .action((o: InstallFlags) =>
      reportingFailures('hook claude-code install', TOOL_FAILURES, () =>
        installHooks(o, (l) => process.stdout.write(l + '\n')),
      ),
    );
  settingsOptions(
    claude
      .command('uninstall')
      .description(
        "Remove the guard's hooks from a Claude Code settings file: every command hook that runs `compaction-guard hook claude-code` (or the --command given), and nothing else.",
      ),
  )
    .option(
      '--command <cmd>',
      'also remove hooks running exactly this command (one install was given)',
    )
    .addHelpText(
      'after',
      '\nA matcher group or event list that removing the hooks left empty goes too. Output: one line per change, naming the file.' +
        '\nExit status: 0 done (or nothing to do); 2 invalid options, or a settings file that is not a JSON object or cannot be written (unchanged).',
    )
    .action((o: InstallFlags) =>
      reportingFailures('hook claude-code uninstall', TOOL_FAILURES, () =>
        uninstallHooks(o, (l) => process.stdout.write(l + '\n')),
      ),
    );
  return hook;
}
