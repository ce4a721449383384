/**
 * Config declared once (src/config/settings.ts): the configuration tables of docs/operations.md
 * name exactly the settings of the table, with the same env vars, flags and defaults; the
 * defaults, env names and `run --help` are derived from it; and the services read their env vars
 * through it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DEFAULTS,
  ENV_NAMES,
  configEnv,
  SECRET_KEYS,
  flagOf,
  kebab,
  loadConfig,
  serviceSettings,
  toolSettings,
} from '../../src/config/config';
import {
  CLAUDE_CODE_SETTINGS,
  SERVICE_SETTINGS,
  SETTINGS,
  TOOL_SETTINGS,
  type Setting,
} from '../../src/config/settings';
import { buildProgram } from '../../src/cli/main';

const DOC = readFileSync(join(__dirname, '..', '..', 'docs', 'operations.md'), 'utf8');

interface Row {
  envs: string[];
  flags: string[] | null;
  defaults: string[] | null;
  line: string;
}

const ticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
const cells = (line: string) =>
  line
    .split('|')
    .slice(1, -1)
    .map((c) => c.trim());

/** The rows of every table of the page whose header has an `env` column (`env` or `Env var`). */
function documentedRows(): Row[] {
  const rows: Row[] = [];
  let columns: string[] | null = null;
  for (const line of DOC.split('\n')) {
    if (!line.startsWith('|')) {
      columns = null;
      continue;
    }
    const cs = cells(line);
    if (columns === null) {
      const names = cs.map((c) => c.toLowerCase());
      columns = names[0] === 'env' || names[0] === 'env var' ? names : [];
      continue;
    }
    if (columns.length === 0 || /^-+$/.test(cs[0]!.replace(/[-:]/g, '-'))) continue;
    const at = (name: string) => {
      const i = columns!.indexOf(name);
      return i < 0 ? null : cs[i]!;
    };
    const envs = ticked(cs[0]!).filter((t) => /^[A-Z][A-Z0-9_]+$/.test(t));
    const flag = at('flag');
    const dflt = at('default');
    rows.push({
      envs,
      flags: flag === null ? null : ticked(flag),
      defaults: dflt === null ? null : dflt.split(' / ').map((d) => d.replace(/`/g, '').trim()),
      line,
    });
  }
  return rows;
}

const TABLES: [string, Record<string, Setting<unknown>>][] = [
  ['run', SETTINGS as Record<string, Setting<unknown>>],
  ['tools', TOOL_SETTINGS as Record<string, Setting<unknown>>],
  ['services', SERVICE_SETTINGS as Record<string, Setting<unknown>>],
  ['claude-code', CLAUDE_CODE_SETTINGS as Record<string, Setting<unknown>>],
];
const byEnv = new Map(
  TABLES.flatMap(([, t]) => Object.entries(t).map(([k, s]) => [s.env, { key: k, s }] as const)),
);

/** The page's word for a setting that has no value by default. */
const NO_VALUE = ['(embedded)', '(none)', 'unset', 'system CAs'];

describe('the configuration tables of docs/operations.md', () => {
  const rows = documentedRows();

  it('name every setting of the table once, and nothing else', () => {
    const documented = rows.flatMap((r) =>
      r.envs.filter((e) => !(e.endsWith('_FILE') && byEnv.get(e.slice(0, -5))?.s.secret)),
    );
    expect([...documented].sort()).toEqual([...byEnv.keys()].sort());
    // A secret's _FILE variant is documented only for secrets.
    const fileVariants = rows.flatMap((r) => r.envs).filter((x) => x.endsWith('_FILE'));
    for (const e of fileVariants.filter((x) => !byEnv.has(x)))
      expect([e, byEnv.get(e.slice(0, -5))?.s.secret]).toEqual([e, true]);
  });

  it("give each setting's flag as run has it", () => {
    for (const r of rows.filter((x) => x.flags !== null)) {
      const envs = r.envs.filter((e) => byEnv.has(e));
      expect([r.line, r.flags]).toEqual([
        r.line,
        envs.map((e) => {
          const { key, s } = byEnv.get(e)!;
          return `--${s.flag ?? kebab(key)}`;
        }),
      ]);
    }
  });

  it("give each setting's default as the table has it", () => {
    for (const r of rows.filter((x) => x.defaults !== null)) {
      const envs = r.envs.filter((e) => byEnv.has(e));
      // "A / B" rows give one default per setting; a secret's row names its _FILE too.
      expect([r.line, r.defaults!.length === envs.length || r.defaults!.length === 1]).toEqual([
        r.line,
        true,
      ]);
      envs.forEach((e, i) => {
        const { s } = byEnv.get(e)!;
        const written = r.defaults![Math.min(i, r.defaults!.length - 1)]!;
        const d = s.default;
        if (s.shown === undefined && (d === null || (Array.isArray(d) && d.length === 0))) {
          expect([e, NO_VALUE.includes(written)]).toEqual([e, true]);
        } else {
          expect([e, written]).toEqual([e, s.shown ?? String(d)]);
        }
      });
    }
  });
});

describe('the settings table', () => {
  it('gives every setting a distinct env var and flag, and help text', () => {
    const all = TABLES.flatMap(([, t]) => Object.values(t));
    expect(new Set(all.map((s) => s.env)).size).toBe(all.length);
    const keys = Object.keys(SETTINGS) as (keyof typeof DEFAULTS)[];
    expect(new Set(keys.map(flagOf)).size).toBe(keys.length);
    for (const s of all) expect([s.env, s.help.length > 10]).toEqual([s.env, true]);
  });

  it('is where DEFAULTS, ENV_NAMES and SECRET_KEYS come from', () => {
    for (const [key, s] of Object.entries(SETTINGS)) {
      expect(DEFAULTS[key as keyof typeof DEFAULTS]).toEqual(s.default);
      expect(ENV_NAMES[key as keyof typeof DEFAULTS]).toBe(s.env);
      expect(SECRET_KEYS.includes(key as keyof typeof DEFAULTS)).toBe(
        (s as Setting<unknown>).secret === true,
      );
    }
    expect(loadConfig({})).toEqual(DEFAULTS);
  });

  it('gives run --help a line per setting with its flag, env var, default and help text', () => {
    const run = buildProgram().commands.find((c) => c.name() === 'run')!;
    for (const [key, s] of Object.entries(SETTINGS) as [string, Setting<unknown>][]) {
      const option = run.options.find((o) => o.long === flagOf(key as keyof typeof DEFAULTS));
      expect([key, option?.description.startsWith(s.help)]).toEqual([key, true]);
      expect(option!.description).toContain(`env ${s.env}`);
      expect(option!.description).toContain('(default: ');
    }
  });

  it('turns a config back into env vars that load to the same values (configEnv)', () => {
    const c = {
      ...DEFAULTS,
      brokers: ['a:1', 'b:2'],
      registryUrl: 'http://r:8081',
      partitions: 3,
      coordinatorCache: false,
      inputTopic: 'in',
    };
    const keys = [
      'brokers',
      'registryUrl',
      'partitions',
      'coordinatorCache',
      'inputTopic',
    ] as const;
    const env = configEnv(c, keys);
    expect(env).toEqual({
      KAFKA_BROKERS: 'a:1,b:2',
      SCHEMA_REGISTRY_URL: 'http://r:8081',
      CG_PARTITIONS: '3',
      CG_COORDINATOR_CACHE: 'false',
      CG_INPUT_TOPIC: 'in',
    });
    expect(loadConfig(env)).toEqual(c);
    expect(configEnv(DEFAULTS, ['registryUrl', 'httpSessionsToken'])).toEqual({});
  });

  it('gives each tool setting to the commands that take it as --help shows them, the flag winning over the env var', () => {
    const program = buildProgram();
    const takers: Record<keyof typeof TOOL_SETTINGS, string[]> = {
      signingKeyFile: ['acknowledge', 'simulate'],
      inputMaxMessageBytes: ['audit'],
    };
    expect(Object.keys(takers).sort()).toEqual(Object.keys(TOOL_SETTINGS).sort());
    for (const [key, s] of Object.entries(TOOL_SETTINGS) as [string, Setting<unknown>][]) {
      for (const name of takers[key as keyof typeof TOOL_SETTINGS]) {
        const cmd = program.commands.find((c) => c.name() === name)!;
        const option = cmd.options.find((o) => o.long === `--${s.flag ?? kebab(key)}`);
        expect([name, key, option?.description.startsWith(s.help)]).toEqual([name, key, true]);
        expect(option!.description).toContain(`env ${s.env}`);
      }
    }
    const defaults = { signingKeyFile: null, inputMaxMessageBytes: 1_048_588 };
    expect(toolSettings({})).toEqual(defaults);
    expect(toolSettings({ CG_SIGNING_KEY_FILE: ' a.key ' })).toEqual({
      ...defaults,
      signingKeyFile: 'a.key',
    });
    expect(toolSettings({ CG_SIGNING_KEY_FILE: 'a.key' }, { key: 'b.key' })).toEqual({
      ...defaults,
      signingKeyFile: 'b.key',
    });
  });

  it('is how the services read their env vars', () => {
    expect(serviceSettings({})).toEqual(
      Object.fromEntries(Object.entries(SERVICE_SETTINGS).map(([k, s]) => [k, s.default])),
    );
    const s = serviceSettings({
      CG_CACHE_DIR: '/tmp/cg-cache',
      CG_KAFKA_VERSION: '4.1.0',
      CG_KAFKA_NODES: '3',
      CG_REGISTRY_VERSION: '3.0.0',
      CG_DOCKER: '0',
      CG_JAVA_HOME: '/opt/jdk',
      CG_EMBEDDED_FILE: '/tmp/e.json',
      CG_SERVICES_FILE: '/tmp/s.json',
    });
    expect(s).toEqual({
      cacheDir: '/tmp/cg-cache',
      kafkaVersion: '4.1.0',
      kafkaNodes: 3,
      registryVersion: '3.0.0',
      docker: false,
      javaHome: '/opt/jdk',
      embeddedFile: '/tmp/e.json',
      servicesFile: '/tmp/s.json',
    });
  });
});
