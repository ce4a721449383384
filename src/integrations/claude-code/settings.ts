/**
 * The guard's hooks in a Claude Code settings object (`.claude/settings.json` and its kin), added
 * and taken out again. Pure: the file side is settingsFile.ts.
 *
 * What is ours is told by the command alone (`isGuardCommand`): Claude Code's settings schema has
 * no place for a marker, and an unknown key could make it refuse the whole file. Everything else
 * in the object (other keys, other events, other hooks on the same events, even on the same
 * matcher) is left exactly as it was, in its order.
 */
import { isDeepStrictEqual } from 'node:util';

/** A settings object as JSON.parse gives it. */
export type ClaudeSettings = Record<string, unknown>;

/** One hook event the guard answers, and the matcher it runs under. */
export interface GuardHookSpec {
  event: 'PreCompact' | 'PostCompact' | 'SessionStart' | 'Stop';
  /**
   * PreCompact and PostCompact: none, so both triggers (`manual`, `auto`) run it. SessionStart's
   * matcher is its `source`: `compact` only (startup, resume and clear have nothing to put back).
   * Stop has no matcher.
   */
  matcher?: string;
  /**
   * Run in the background, the session not waiting for it (the hook's `async`): Stop only
   * reports the response's turns, which nothing waits for (decision 234).
   */
  async?: true;
}

export const GUARD_HOOKS: readonly GuardHookSpec[] = [
  { event: 'PreCompact' },
  { event: 'PostCompact' },
  { event: 'SessionStart', matcher: 'compact' },
  { event: 'Stop', async: true },
];

/**
 * The guard's hooks, with Stop in the background (the default) or waited for: `claude -p` kills
 * an async hook within ~70 ms of its start (decision 234), so one-shot headless runs that want
 * each response's turns reported install it waited for, at ~1 s a response.
 */
export function guardHookSpecs(o: { stopInBackground?: boolean } = {}): readonly GuardHookSpec[] {
  if (o.stopInBackground !== false) return GUARD_HOOKS;
  return GUARD_HOOKS.map((spec) => (spec.event === 'Stop' ? { event: 'Stop' } : spec));
}

/**
 * Seconds Claude Code waits for the command before it gives up on it (its default is 60): a
 * PreCompact may wait for two verdicts (CG_CLAUDE_VERDICT_TIMEOUT_MS, 20 s each) around a spill.
 */
export const HOOK_TIMEOUT_SECONDS = 90;

/** How the guard's command hook reads in the settings. */
export interface GuardHook {
  type: 'command';
  command: string;
  timeout: number;
  async?: true;
}

export function guardHook(
  command: string,
  timeout = HOOK_TIMEOUT_SECONDS,
  background = false,
): GuardHook {
  return { type: 'command', command, timeout, ...(background ? { async: true as const } : {}) };
}

/**
 * Whether a hook command runs `compaction-guard hook claude-code`, however it is spelt: through
 * npx or a global install (`compaction-guard hook claude-code`), or the absolute form install
 * writes (`"/usr/bin/node" "/x/bin/compaction-guard.js" hook claude-code`).
 */
export function isGuardCommand(command: string): boolean {
  return /compaction-guard(\.js)?["']?\s+hook\s+claude-code(\s|$)/.test(command);
}

/** What one install or uninstall did to one event's hooks. */
export interface HookChange {
  /** One of GUARD_HOOKS' events, or (uninstall) any event someone put the guard's command on. */
  event: string;
  matcher?: string;
  change: 'added' | 'updated' | 'unchanged' | 'removed';
}

interface MatcherGroup {
  matcher?: unknown;
  hooks?: unknown;
  [key: string]: unknown;
}

const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);

/** `hook` is one of ours: a command hook whose command is the guard's (`ours`). */
function isOurHook(hook: unknown, ours: (command: string) => boolean): boolean {
  return isObject(hook) && hook.type === 'command' && typeof hook.command === 'string'
    ? ours(hook.command)
    : false;
}

/** The hooks of one matcher group, or [] when it has none (or not an array). */
const groupHooks = (g: unknown): unknown[] =>
  isObject(g) && Array.isArray(g.hooks) ? (g.hooks as unknown[]) : [];

/** How many of our hooks an event's groups hold. */
function countOurs(groups: unknown[], ours: (command: string) => boolean): number {
  return groups.reduce<number>(
    (n, g) => n + groupHooks(g).filter((h) => isOurHook(h, ours)).length,
    0,
  );
}

/**
 * The event's groups without our hooks. A group that held only ours goes with them; a group
 * that also holds someone else's keeps theirs.
 */
function withoutOurs(groups: unknown[], ours: (command: string) => boolean): unknown[] {
  return groups.flatMap((g) => {
    const hooks = groupHooks(g);
    const kept = hooks.filter((h) => !isOurHook(h, ours));
    if (kept.length === hooks.length) return [g];
    return kept.length === 0 ? [] : [{ ...(g as MatcherGroup), hooks: kept }];
  });
}

/** The event's groups already hold exactly our hook, once, under the right matcher. */
function alreadyInstalled(
  groups: unknown[],
  spec: GuardHookSpec,
  hook: GuardHook,
  ours: (command: string) => boolean,
): boolean {
  if (countOurs(groups, ours) !== 1) return false;
  const group = groups.find((g) => groupHooks(g).some((h) => isOurHook(h, ours)));
  return (
    isObject(group) &&
    group.matcher === spec.matcher &&
    groupHooks(group).some((h) => isDeepStrictEqual(h, hook))
  );
}

/** The `hooks` object of the settings, or an empty one (the settings' own is not changed). */
const hooksOf = (settings: ClaudeSettings): Record<string, unknown> =>
  isObject(settings.hooks) ? settings.hooks : {};

/** The event's matcher groups, or [] when it has none (or not an array). */
const groupsOf = (hooks: Record<string, unknown>, event: string): unknown[] =>
  Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];

/**
 * The settings with the guard's hooks, `command` each: an event that holds exactly the hook
 * already is left as it is; one holding an older form of it (another command or timeout, another
 * matcher, twice) has it replaced by one group of its own at the end. Installing twice is
 * installing once.
 */
export function installGuardHooks(
  settings: ClaudeSettings,
  command: string,
  ours: (command: string) => boolean = isGuardCommand,
  specs: readonly GuardHookSpec[] = GUARD_HOOKS,
): { settings: ClaudeSettings; changes: HookChange[] } {
  const isOurs = (c: string) => c === command || ours(c);
  const hooks = { ...hooksOf(settings) };
  const changes: HookChange[] = [];
  for (const spec of specs) {
    const hook = guardHook(command, HOOK_TIMEOUT_SECONDS, spec.async === true);
    const groups = groupsOf(hooks, spec.event);
    const found = {
      event: spec.event,
      ...(spec.matcher === undefined ? {} : { matcher: spec.matcher }),
    };
    if (alreadyInstalled(groups, spec, hook, isOurs)) {
      changes.push({ ...found, change: 'unchanged' });
      continue;
    }
    const group = {
      ...(spec.matcher === undefined ? {} : { matcher: spec.matcher }),
      hooks: [hook],
    };
    hooks[spec.event] = [...withoutOurs(groups, isOurs), group];
    changes.push({ ...found, change: countOurs(groups, isOurs) === 0 ? 'added' : 'updated' });
  }
  const changed = changes.some((c) => c.change !== 'unchanged');
  return { settings: changed ? { ...settings, hooks } : settings, changes };
}

/**
 * The settings without the guard's hooks (told by `ours`; `command` too when given), on whatever
 * event they are. A matcher group, an event's list or the `hooks` object that removing them left
 * empty goes too; one that was empty before is kept.
 */
export function uninstallGuardHooks(
  settings: ClaudeSettings,
  command?: string,
  ours: (command: string) => boolean = isGuardCommand,
): { settings: ClaudeSettings; changes: HookChange[] } {
  const isOurs = (c: string) => c === command || ours(c);
  if (!isObject(settings.hooks)) return { settings, changes: [] };
  const hooks: Record<string, unknown> = {};
  const changes: HookChange[] = [];
  for (const [event, value] of Object.entries(settings.hooks)) {
    const groups = Array.isArray(value) ? (value as unknown[]) : [];
    if (countOurs(groups, isOurs) === 0) {
      hooks[event] = value;
      continue;
    }
    const kept = withoutOurs(groups, isOurs);
    if (kept.length > 0) hooks[event] = kept;
    const spec = GUARD_HOOKS.find((s) => s.event === event);
    changes.push({
      event,
      ...(spec?.matcher === undefined ? {} : { matcher: spec.matcher }),
      change: 'removed',
    });
  }
  if (changes.length === 0) return { settings, changes };
  const rest = Object.fromEntries(Object.entries(settings).filter(([k]) => k !== 'hooks'));
  return {
    settings: Object.keys(hooks).length > 0 ? { ...settings, hooks } : rest,
    changes,
  };
}
