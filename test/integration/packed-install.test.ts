/**
 * The package as a user installs it: `npm pack`, then `npm install` of the tarball into an empty
 * project. `compaction-guard/client` loads without the optional peers (no `ai`, no langchain);
 * once `ai` is installed, `compaction-guard/ai-sdk` loads without langchain. Needs `dist/`
 * (`npm test` builds it first) and the npm registry (or npm's cache) for the dependencies.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

jest.setTimeout(300_000);

const ROOT = path.resolve(__dirname, '../..');
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  devDependencies: Record<string, string>;
};

/** npm on the project's Node, quiet, offline when its cache has everything. */
function npm(args: string[], cwd: string): string {
  return execFileSync('npm', [...args, '--no-audit', '--no-fund', '--prefer-offline'], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** What `node -e` prints in the app: every require goes through the installed package. */
function nodeIn(cwd: string, script: string): string {
  return execFileSync(process.execPath, ['-e', script], { cwd, encoding: 'utf8' }).trim();
}

const resolves = (name: string) =>
  `(() => { try { require.resolve(${JSON.stringify(name)}); return true } catch { return false } })()`;

describe('the packed package, installed into an empty project', () => {
  let dir: string;
  let app: string;
  let files: string[];
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cg-pack-'));
    const [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', dir], ROOT)) as {
      filename: string;
      files: { path: string }[];
    }[];
    files = packed!.files.map((f) => f.path);
    app = path.join(dir, 'app');
    mkdirSync(app);
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true }));
    npm(['install', path.join(dir, packed!.filename)], app);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('holds the built entry points, the schemas and the CLI, no sources or tests', () => {
    for (const f of [
      'dist/client/index.js',
      'dist/integrations/langchain/index.js',
      'dist/integrations/ai-sdk/index.js',
      'schemas/context-change-event.avsc',
      'bin/compaction-guard.js',
    ])
      expect(files).toContain(f);
    expect(files.filter((f) => f.startsWith('src/') || f.startsWith('test/'))).toEqual([]);
  });

  it('compaction-guard/client loads without ai and without langchain', () => {
    expect(nodeIn(app, `console.log(${resolves('ai')}, ${resolves('langchain')})`)).toBe(
      'false false',
    );
    expect(nodeIn(app, "console.log(typeof require('compaction-guard/client').GuardClient)")).toBe(
      'function',
    );
  });

  it('compaction-guard/ai-sdk loads with ai installed and without langchain', () => {
    npm(['install', `ai@${pkg.devDependencies.ai}`], app);
    expect(nodeIn(app, `console.log(${resolves('ai')}, ${resolves('langchain')})`)).toBe(
      'true false',
    );
    expect(
      nodeIn(app, "console.log(typeof require('compaction-guard/ai-sdk').guardedCompaction)"),
    ).toBe('function');
  });
});
