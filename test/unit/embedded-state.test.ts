import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  type EmbeddedState,
  embeddedStatePath,
  readEmbeddedState,
  removeEmbeddedState,
  writeEmbeddedState,
} from '../../src/services/embedded';

describe('the embedded state file', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  const state = (pid: number): EmbeddedState => ({
    brokers: ['127.0.0.1:9092'],
    registryUrl: 'http://127.0.0.1:8080/apis/ccompat/v7',
    httpUrl: 'http://127.0.0.1:9464',
    pid,
    startedAt: '2026-12-03T12:00:00.000Z',
  });
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cg-embedded-'));
    env = { CG_EMBEDDED_FILE: path.join(dir, 'sub', 'embedded.json') };
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('defaults to .cache/embedded.json under the working directory; CG_EMBEDDED_FILE overrides', () => {
    expect(embeddedStatePath({})).toBe(path.resolve('.cache/embedded.json'));
    expect(embeddedStatePath(env)).toBe(path.join(dir, 'sub', 'embedded.json'));
  });

  it('reads back what a live process wrote, leaving no temporary file', () => {
    writeEmbeddedState(state(process.pid), env);
    expect(readEmbeddedState(env)).toEqual(state(process.pid));
    expect(
      spawnSync('ls', [path.join(dir, 'sub')])
        .stdout.toString()
        .trim(),
    ).toBe('embedded.json');
  });

  it('is null when the file is absent, not a state, or its process is gone (kill -9 left it)', () => {
    expect(readEmbeddedState(env)).toBeNull();
    mkdirSync(path.dirname(env.CG_EMBEDDED_FILE!), { recursive: true });
    writeFileSync(env.CG_EMBEDDED_FILE!, '{"brokers": "not a list"}');
    expect(readEmbeddedState(env)).toBeNull();
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    writeEmbeddedState(state(Number(dead.stdout.toString())), env);
    expect(readEmbeddedState(env)).toBeNull();
  });

  it("is removed only by the process it names (a second npm start's file stays)", () => {
    writeEmbeddedState(state(process.pid), env);
    removeEmbeddedState(process.pid + 1, env);
    expect(JSON.parse(readFileSync(env.CG_EMBEDDED_FILE!, 'utf8')).pid).toBe(process.pid);
    removeEmbeddedState(process.pid, env);
    expect(readEmbeddedState(env)).toBeNull();
    expect(() => removeEmbeddedState(process.pid, env)).not.toThrow();
  });
});
