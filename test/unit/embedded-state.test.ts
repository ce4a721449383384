import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  type EmbeddedState,
  embeddedStatePath,
  readEmbeddedState,
  removeEmbeddedState,
  untrustedReason,
  writeEmbeddedState,
} from '../../src/services/embedded';
import { ConfigError } from '../../src/config/config';

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

  it('is written mode 0600, whatever the umask', () => {
    const old = process.umask(0o000);
    try {
      writeEmbeddedState(state(process.pid), env);
    } finally {
      process.umask(old);
    }
    expect(statSync(env.CG_EMBEDDED_FILE!).mode & 0o777).toBe(0o600);
  });

  /** The refusal readEmbeddedState throws, as the on-call commands print it. */
  const refusal = () => {
    try {
      readEmbeddedState(env);
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      return (e as Error).message;
    }
    throw new Error('expected a refusal');
  };

  it('is refused when group- or world-writable', () => {
    writeEmbeddedState(state(process.pid), env);
    for (const mode of [0o620, 0o602, 0o666]) {
      chmodSync(env.CG_EMBEDDED_FILE!, mode);
      expect(refusal()).toBe(
        `${env.CG_EMBEDDED_FILE} is not trusted: it is group- or world-writable (mode 0${mode.toString(8)}). ` +
          'It tells the on-call commands where to send credentials; remove it (a running `npm start` writes it again, mode 0600) or set KAFKA_BROKERS and SCHEMA_REGISTRY_URL',
      );
    }
    chmodSync(env.CG_EMBEDDED_FILE!, 0o644); // readable by others is no risk to the reader
    expect(readEmbeddedState(env)).toEqual(state(process.pid));
  });

  it('is refused when owned by another user (checked for real when the tests run as root)', () => {
    const st = { uid: 1001, mode: 0o100600, isFile: () => true };
    expect(untrustedReason(st, 1000)).toBe('it is owned by uid 1001, not by you (uid 1000)');
    expect(untrustedReason(st, 1001)).toBeNull();
    expect(untrustedReason({ ...st, isFile: () => false }, 1001)).toBe('it is not a regular file');
    if (process.getuid?.() !== 0) return;
    writeEmbeddedState(state(process.pid), env);
    chownSync(env.CG_EMBEDDED_FILE!, 4242, 4242);
    expect(refusal()).toMatch(/is not trusted: it is owned by uid 4242, not by you \(uid 0\)/);
  });

  it('is refused when it is a symbolic link (to a file of the right owner and mode)', () => {
    const real = path.join(dir, 'real.json');
    writeEmbeddedState(state(process.pid), { CG_EMBEDDED_FILE: real });
    mkdirSync(path.dirname(env.CG_EMBEDDED_FILE!), { recursive: true });
    symlinkSync(real, env.CG_EMBEDDED_FILE!);
    expect(refusal()).toMatch(/is not trusted: it is a symbolic link/);
  });

  it('is refused when it names an endpoint beyond this machine (where the sessions token would go)', () => {
    const cases: [Partial<EmbeddedState>, RegExp][] = [
      [
        { httpUrl: 'http://attacker.example:9464' },
        /httpUrl "http:\/\/attacker.example:9464" is not on a loopback address/,
      ],
      [{ httpUrl: 'http://10.0.0.7:9464' }, /httpUrl .* is not on a loopback address/],
      [
        { brokers: ['127.0.0.1:9092', 'kafka.example:9092'] },
        /broker "kafka.example:9092" is not a loopback address/,
      ],
      [
        { registryUrl: 'http://registry.example/apis' },
        /registryUrl .* is not on a loopback address/,
      ],
      [{ registryUrl: 'http://u:secret@127.0.0.1:8080' }, /registryUrl carries credentials/],
    ];
    for (const [change, expected] of cases) {
      writeEmbeddedState({ ...state(process.pid), ...change }, env);
      const message = refusal();
      expect(message).toMatch(expected);
      expect(message).not.toContain('secret');
    }
    for (const ok of ['http://localhost:9464', 'http://[::1]:9464', 'http://127.0.0.2:1']) {
      writeEmbeddedState({ ...state(process.pid), httpUrl: ok }, env);
      expect(readEmbeddedState(env)?.httpUrl).toBe(ok);
    }
  });
});
