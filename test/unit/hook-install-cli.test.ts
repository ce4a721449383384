/**
 * `compaction-guard hook claude-code install` and `uninstall` as a person runs them, on real files
 * in a temporary project: what is written, what is printed, what is refused. Runs the built CLI
 * (`npm run build`, as `npm test` does first).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const LAUNCHER = path.join(ROOT, 'bin', 'compaction-guard.js');

let home: string;
let project: string;
beforeEach(() => {
  home = mkdtempSync(path.join(tmpdir(), 'cg-hook-home-'));
  project = mkdtempSync(path.join(tmpdir(), 'cg-hook-project-'));
});
afterEach(() => {
  rmSync(home, { recursive: true, force: true });
  rmSync(project, { recursive: true, force: true });
});

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, [LAUNCHER, 'hook', 'claude-code', ...args], {
    cwd: project,
    env: { PATH: process.env.PATH, HOME: home },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const projectFile = () => path.join(project, '.claude', 'settings.json');
const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;

describe('hook claude-code install / uninstall (the built CLI, real files)', () => {
  it('install creates .claude/settings.json in the current directory with the absolute command; uninstall leaves {}', () => {
    const r = cli('install');
    expect(r.status).toBe(0);
    const file = projectFile();
    const command = `"${process.execPath}" "${LAUNCHER}" hook claude-code`;
    expect(r.stdout.trim().split('\n')).toEqual([
      `${file}: created`,
      `${file}: added the PreCompact hook`,
      `${file}: added the PostCompact hook`,
      `${file}: added the SessionStart (compact) hook`,
      `${file}: added the Stop hook`,
      `${file}: the hooks run: ${command}`,
    ]);
    const hook = { type: 'command', command, timeout: 90 };
    expect(read(file)).toEqual({
      hooks: {
        PreCompact: [{ hooks: [hook] }],
        PostCompact: [{ hooks: [hook] }],
        SessionStart: [{ matcher: 'compact', hooks: [hook] }],
        Stop: [{ hooks: [{ ...hook, async: true }] }],
      },
    });

    const u = cli('uninstall');
    expect(u.status).toBe(0);
    expect(u.stdout.trim().split('\n')).toEqual([
      `${file}: removed the PreCompact hook`,
      `${file}: removed the PostCompact hook`,
      `${file}: removed the SessionStart (compact) hook`,
      `${file}: removed the Stop hook`,
    ]);
    expect(read(file)).toEqual({});
  });

  it("installing again writes nothing; the user's settings and hooks come back byte for byte after uninstall", () => {
    const file = projectFile();
    mkdirSync(path.dirname(file));
    const theirs =
      JSON.stringify(
        {
          model: 'opus',
          hooks: {
            SessionStart: [
              { matcher: 'compact', hooks: [{ type: 'command', command: 'cat NOTES.md' }] },
            ],
            PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'audit.sh' }] }],
          },
          permissions: { allow: ['Bash(npm test)'] },
        },
        null,
        2,
      ) + '\n';
    writeFileSync(file, theirs);
    expect(cli('install', '--command', 'npx compaction-guard hook claude-code').status).toBe(0);
    const installed = readFileSync(file, 'utf8');
    const mtime = statSync(file).mtimeMs;

    const again = cli('install', '--command', 'npx compaction-guard hook claude-code');
    expect(again.stdout).toBe(
      `${file}: unchanged (the compaction-guard hooks are in it already)\n`,
    );
    expect(readFileSync(file, 'utf8')).toBe(installed);
    expect(statSync(file).mtimeMs).toBe(mtime);

    expect(cli('uninstall').status).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(theirs);
  });

  it('--local and --user choose their files (--dir for the project); two at once are refused', () => {
    const other = path.join(project, 'sub');
    expect(cli('install', '--local', '--dir', other).status).toBe(0);
    expect(read(path.join(other, '.claude', 'settings.local.json'))).toHaveProperty('hooks');
    expect(cli('install', '--user').status).toBe(0);
    expect(read(path.join(home, '.claude', 'settings.json'))).toHaveProperty('hooks');
    const both = cli('install', '--user', '--local');
    expect(both.status).toBe(2);
    expect(both.stderr).toMatch(/--local, --user: choose one settings file; nothing was written/);
  });

  it('refuses a settings file that is not valid JSON, naming the file, line and column, and leaves it as it was', () => {
    const file = projectFile();
    mkdirSync(path.dirname(file));
    const broken = '{\n  "model": "opus"\n  "hooks": {}\n}\n';
    writeFileSync(file, broken);
    for (const command of ['install', 'uninstall']) {
      const r = cli(command);
      expect(r.status).toBe(2);
      expect(r.stderr).toContain(`${file} is not valid JSON at line 3, column 3`);
      expect(readFileSync(file, 'utf8')).toBe(broken);
    }
  });

  it('uninstall of a file that does not exist says so and creates nothing', () => {
    const r = cli('uninstall');
    expect(r).toMatchObject({
      status: 0,
      stdout: `${projectFile()}: does not exist (nothing to remove)\n`,
    });
    expect(() => statSync(projectFile())).toThrow();
  });
});
