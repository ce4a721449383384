/**
 * The guard's hooks in a Claude Code settings object (src/integrations/claude-code/settings.ts):
 * installing is idempotent, uninstalling undoes it exactly, and nobody else's hook (or any other
 * key) ever changes. The file side (settingsFile.ts): refusals, modes, symbolic links.
 */
import {
  chmodSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import {
  type ClaudeSettings,
  GUARD_HOOKS,
  guardHookSpecs,
  HOOK_TIMEOUT_SECONDS,
  installGuardHooks,
  isGuardCommand,
  uninstallGuardHooks,
} from '../../src/integrations/claude-code/settings';
import {
  lineColumn,
  parseSettings,
  readSettingsFile,
  settingsPath,
  writeSettingsFile,
} from '../../src/integrations/claude-code/settingsFile';

const OURS = '"/usr/bin/node" "/opt/cg/bin/compaction-guard.js" hook claude-code';
const NPX = 'npx compaction-guard hook claude-code';

const EVENTS = ['PreCompact', 'PostCompact', 'SessionStart', 'Stop', 'PreToolUse'];

/** A command hook of someone else's. */
const otherHook = fc.record(
  {
    type: fc.constant('command'),
    command: fc.string({ minLength: 1 }).filter((c) => !isGuardCommand(c)),
    timeout: fc.integer({ min: 1, max: 600 }),
  },
  { requiredKeys: ['type', 'command'] },
);
const promptHook = fc.record({ type: fc.constant('prompt'), prompt: fc.string() });

const group = fc.record(
  {
    matcher: fc.constantFrom('compact', 'startup|resume', 'auto', 'manual', '', 'Write|Edit'),
    hooks: fc.array(fc.oneof(otherHook, promptHook), { maxLength: 3 }),
  },
  { requiredKeys: ['hooks'] },
);

/** Other top-level settings keys, any JSON. */
const otherKeys = fc.dictionary(
  fc.string({ minLength: 1 }).filter((k) => k !== 'hooks' && k !== '__proto__'),
  fc.jsonValue(),
  { maxKeys: 4 },
);

/**
 * Settings without any of the guard's hooks. Their `hooks` object and its events' lists are not
 * empty (an empty one is not told from one that removing ours emptied: decision 231).
 */
const settingsWithoutOurs: fc.Arbitrary<ClaudeSettings> = fc
  .tuple(
    otherKeys,
    fc.option(
      fc.dictionary(fc.constantFrom(...EVENTS), fc.array(group, { minLength: 1, maxLength: 3 }), {
        minKeys: 1,
      }),
      { nil: undefined },
    ),
  )
  .map(([rest, hooks]) => (hooks === undefined ? rest : { ...rest, hooks }));

/** Every hook of the settings that is not the guard's, with its event and group's matcher, in order. */
function othersOf(settings: ClaudeSettings): unknown[] {
  const hooks = (settings.hooks ?? {}) as Record<string, { matcher?: string; hooks: unknown[] }[]>;
  return Object.entries(hooks).flatMap(([event, groups]) =>
    groups.flatMap((g) =>
      g.hooks
        .filter((h) => !isGuardCommand((h as { command?: string }).command ?? ''))
        .map((h) => ({ event, matcher: g.matcher, h })),
    ),
  );
}

/** The guard's hooks of the settings: event, matcher, command. */
function oursOf(
  settings: ClaudeSettings,
): { event: string; matcher?: string; command: string; async?: true }[] {
  const hooks = (settings.hooks ?? {}) as Record<string, { matcher?: string; hooks: unknown[] }[]>;
  return Object.entries(hooks).flatMap(([event, groups]) =>
    groups.flatMap((g) =>
      g.hooks
        .map((h) => h as { command?: string; async?: true })
        .filter((h) => isGuardCommand(h.command ?? ''))
        .map((h) => ({
          event,
          ...(g.matcher === undefined ? {} : { matcher: g.matcher }),
          command: h.command!,
          ...(h.async === undefined ? {} : { async: h.async }),
        })),
    ),
  );
}

const withoutHooksKey = (s: ClaudeSettings) =>
  Object.fromEntries(Object.entries(s).filter(([k]) => k !== 'hooks'));

describe('installing the guard hooks into a settings object', () => {
  it('property: installing twice is installing once (and the second install reports nothing changed)', () => {
    fc.assert(
      fc.property(settingsWithoutOurs, (s) => {
        const once = installGuardHooks(s, OURS).settings;
        const twice = installGuardHooks(once, OURS);
        expect(twice.settings).toEqual(once);
        expect(twice.changes.every((c) => c.change === 'unchanged')).toBe(true);
      }),
    );
  });

  it('property: uninstalling after installing gives back the settings exactly, key order included', () => {
    fc.assert(
      fc.property(settingsWithoutOurs, fc.constantFrom(OURS, NPX), (s, command) => {
        const back = uninstallGuardHooks(installGuardHooks(s, command).settings).settings;
        expect(JSON.stringify(back)).toBe(JSON.stringify(s));
      }),
    );
  });

  it("property: nobody else's hooks change, nor any other key, by install or uninstall", () => {
    fc.assert(
      fc.property(settingsWithoutOurs, (s) => {
        const installed = installGuardHooks(s, OURS).settings;
        expect(othersOf(installed)).toEqual(othersOf(s));
        expect(withoutHooksKey(installed)).toEqual(withoutHooksKey(s));
        const removed = uninstallGuardHooks(installed).settings;
        expect(othersOf(removed)).toEqual(othersOf(s));
      }),
    );
  });

  it('property: after install each guard event holds the hook exactly once, under its matcher', () => {
    // Settings that hold stale forms of ours already: another command, another matcher, twice.
    const stale = fc.array(
      fc.record({
        event: fc.constantFrom('PreCompact', 'PostCompact', 'SessionStart', 'Stop'),
        matcher: fc.option(fc.constantFrom('compact', 'startup', 'auto'), { nil: undefined }),
        command: fc.constantFrom(NPX, '/old/node /old/bin/compaction-guard.js hook claude-code'),
      }),
      { maxLength: 4 },
    );
    fc.assert(
      fc.property(settingsWithoutOurs, stale, (s, olds) => {
        const hooks = { ...((s.hooks ?? {}) as Record<string, unknown[]>) };
        for (const o of olds)
          hooks[o.event] = [
            ...(hooks[o.event] ?? []),
            {
              ...(o.matcher === undefined ? {} : { matcher: o.matcher }),
              hooks: [{ type: 'command', command: o.command }],
            },
          ];
        const installed = installGuardHooks({ ...s, hooks }, OURS).settings;
        expect(oursOf(installed)).toEqual(
          expect.arrayContaining(GUARD_HOOKS.map((g) => ({ ...g, command: OURS }))),
        );
        expect(oursOf(installed)).toHaveLength(GUARD_HOOKS.length);
        expect(oursOf(uninstallGuardHooks(installed).settings)).toEqual([]);
      }),
    );
  });

  it('writes one group per event: PreCompact and PostCompact with no matcher, SessionStart under "compact", Stop in the background (async), timeout 90 s', () => {
    const { settings, changes } = installGuardHooks({ model: 'opus' }, NPX);
    const hook = { type: 'command', command: NPX, timeout: HOOK_TIMEOUT_SECONDS };
    expect(settings).toEqual({
      model: 'opus',
      hooks: {
        PreCompact: [{ hooks: [hook] }],
        PostCompact: [{ hooks: [hook] }],
        SessionStart: [{ matcher: 'compact', hooks: [hook] }],
        Stop: [{ hooks: [{ ...hook, async: true }] }],
      },
    });
    expect(changes.map((c) => c.change)).toEqual(['added', 'added', 'added', 'added']);
  });

  it('installs Stop waited for when asked (one-shot claude -p runs), and back in the background by a default install', () => {
    const waits = installGuardHooks(
      {},
      NPX,
      isGuardCommand,
      guardHookSpecs({ stopInBackground: false }),
    );
    const hook = { type: 'command', command: NPX, timeout: HOOK_TIMEOUT_SECONDS };
    expect((waits.settings.hooks as Record<string, unknown>).Stop).toEqual([{ hooks: [hook] }]);
    expect(
      installGuardHooks(
        waits.settings,
        NPX,
        isGuardCommand,
        guardHookSpecs({ stopInBackground: false }),
      ).changes.every((c) => c.change === 'unchanged'),
    ).toBe(true);
    const back = installGuardHooks(waits.settings, NPX);
    expect((back.settings.hooks as Record<string, unknown>).Stop).toEqual([
      { hooks: [{ ...hook, async: true }] },
    ]);
  });

  it('replaces a Stop hook of the guard that does not run in the background', () => {
    const sync = { type: 'command', command: NPX, timeout: HOOK_TIMEOUT_SECONDS };
    const { settings, changes } = installGuardHooks({ hooks: { Stop: [{ hooks: [sync] }] } }, NPX);
    expect((settings.hooks as Record<string, unknown>).Stop).toEqual([
      { hooks: [{ ...sync, async: true }] },
    ]);
    expect(changes.find((c) => c.event === 'Stop')?.change).toBe('updated');
  });

  it('examples/claude-code/settings.json is what install writes with the npx command into no settings', () => {
    const example = path.resolve(__dirname, '../../examples/claude-code/settings.json');
    const { settings } = installGuardHooks({}, NPX);
    expect(readFileSync(example, 'utf8')).toBe(JSON.stringify(settings, null, 2) + '\n');
  });

  it("keeps a user's hook that shares the guard's group; removes only the guard's from it", () => {
    const theirs = { type: 'command', command: 'echo saved' };
    const s = {
      hooks: { PreCompact: [{ hooks: [theirs, { type: 'command', command: NPX }] }] },
    };
    const installed = installGuardHooks(s, NPX).settings as { hooks: Record<string, unknown> };
    expect(installed.hooks.PreCompact).toEqual([
      { hooks: [theirs] },
      { hooks: [{ type: 'command', command: NPX, timeout: HOOK_TIMEOUT_SECONDS }] },
    ]);
    expect(uninstallGuardHooks(s).settings).toEqual({
      hooks: { PreCompact: [{ hooks: [theirs] }] },
    });
  });

  it('uninstall --command also removes hooks running exactly that command', () => {
    const custom = '/usr/local/bin/my-guard-wrapper';
    const installed = installGuardHooks({}, custom).settings;
    expect(uninstallGuardHooks(installed).changes).toEqual([]);
    expect(uninstallGuardHooks(installed, custom).settings).toEqual({});
  });

  it('tells the guard command in each of its spellings, and no other', () => {
    expect(isGuardCommand(OURS)).toBe(true);
    expect(isGuardCommand(NPX)).toBe(true);
    expect(isGuardCommand("'/n/node' '/x/bin/compaction-guard.js' hook claude-code")).toBe(true);
    expect(isGuardCommand('compaction-guard hook claude-codex')).toBe(false);
    expect(isGuardCommand('compaction-guard run')).toBe(false);
    expect(isGuardCommand('echo compaction-guard')).toBe(false);
  });
});

describe('settings files', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cg-settings-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("names Claude Code's three files: project, local, user", () => {
    expect(settingsPath('project', '/p', '/h')).toBe('/p/.claude/settings.json');
    expect(settingsPath('local', '/p', '/h')).toBe('/p/.claude/settings.local.json');
    expect(settingsPath('user', '/p', '/h')).toBe('/h/.claude/settings.json');
  });

  it('refuses a file that is not valid JSON, naming its line and column', () => {
    const text = '{\n  "model": "opus",\n  "hooks": {,\n}\n';
    expect(() => parseSettings(text, '/p/settings.json')).toThrow(
      /^\/p\/settings\.json is not valid JSON at line 3, column 13 .*nothing was written/,
    );
    expect(lineColumn(text, text.indexOf('{,') + 1)).toEqual({ line: 3, column: 13 });
  });

  it('refuses JSON that is not an object; reads an empty file as no settings', () => {
    expect(() => parseSettings('[]', 'f')).toThrow(/not a JSON object/);
    expect(() => parseSettings('null', 'f')).toThrow(/not a JSON object/);
    expect(parseSettings(' \n', 'f')).toEqual({});
  });

  it('keeps the mode of the file it rewrites, and its indentation', () => {
    const file = path.join(dir, 'settings.json');
    writeFileSync(file, '{\n    "model": "opus"\n}\n');
    chmodSync(file, 0o600);
    const read = readSettingsFile(file);
    writeSettingsFile(read, { ...read.settings, x: 1 });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toBe('{\n    "model": "opus",\n    "x": 1\n}\n');
  });

  it('writes through a symbolic link to its target, which stays a link', () => {
    const target = path.join(dir, 'dotfiles-settings.json');
    const link = path.join(dir, 'settings.json');
    writeFileSync(target, '{}\n');
    symlinkSync(target, link);
    writeSettingsFile(readSettingsFile(link), { model: 'opus' });
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readFileSync(target, 'utf8'))).toEqual({ model: 'opus' });
  });

  it('creates a missing file and its .claude directory', () => {
    const file = settingsPath('project', dir);
    const read = readSettingsFile(file);
    expect(read.exists).toBe(false);
    writeSettingsFile(read, { a: 1 });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ a: 1 });
  });
});
