import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { parse } from 'yaml';
import { buildProgram } from '../../src/cli/main';
import {
  ConfigError,
  ENV_NAMES,
  SECRET_KEYS,
  loadConfig,
  requireSafeHttp,
  toolSettings,
} from '../../src/config/config';
import { requireAuthority } from '../../src/authority/keyRingInForce';
import { DEFAULT_KAFKA_VERSION, DEFAULT_REGISTRY_VERSION } from '../../src/services/maven';
import { TOOL_SETTINGS } from '../../src/config/settings';
import { loadKeyRing } from '../../src/authority/ring';
import { loadSigningKey } from '../../src/authority/signing';

const ROOT = path.resolve(__dirname, '../..');

interface Service {
  build?: string | { context: string; dockerfile?: string };
  volumes?: string[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  image?: string;
  command?: string[];
  restart?: string;
  environment?: Record<string, string | number>;
  entrypoint?: string[];
  ports?: string[];
  healthcheck?: { test: string[] };
}

describe('docker-compose.yml', () => {
  const compose = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as {
    services: Record<string, Service>;
  };

  it('parses and declares Kafka, a registry, the processor, the simulator, Prometheus and Grafana', () => {
    expect(Object.keys(compose.services).sort()).toEqual(
      ['grafana', 'init', 'kafka', 'processor', 'prometheus', 'registry', 'simulator'].sort(),
    );
  });

  it('every file or folder a service mounts or builds from exists in the repo', () => {
    const refs: string[] = [];
    for (const s of Object.values(compose.services)) {
      if (typeof s.build === 'string') refs.push(path.join(s.build, 'Dockerfile'));
      else if (s.build) refs.push(path.join(s.build.context, s.build.dockerfile ?? 'Dockerfile'));
      for (const v of s.volumes ?? []) if (v.startsWith('./')) refs.push(v.split(':')[0]!);
    }
    expect(refs.length).toBeGreaterThanOrEqual(5);
    for (const ref of refs) expect([ref, existsSync(path.join(ROOT, ref))]).toEqual([ref, true]);
  });

  it('every depends_on names a declared service', () => {
    for (const s of Object.values(compose.services)) {
      const deps = Array.isArray(s.depends_on) ? s.depends_on : Object.keys(s.depends_on ?? {});
      for (const d of deps) expect(Object.keys(compose.services)).toContain(d);
    }
  });

  it('the Dockerfile copies only paths that exist', () => {
    const docker = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
    const copies = [...docker.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) =>
      m[1]!.split(/\s+/),
    );
    expect(copies.length).toBeGreaterThan(3);
    for (const c of copies) expect([c, existsSync(path.join(ROOT, c))]).toEqual([c, true]);
  });

  const services = compose.services;
  const { kafka, registry, processor, simulator } = services as Record<string, Service>;

  it('runs the Kafka and Apicurio versions the tests run (src/services/maven.ts)', () => {
    expect(kafka!.image).toBe(`apache/kafka:${DEFAULT_KAFKA_VERSION}`);
    expect(registry!.image).toBe(`apicurio/apicurio-registry:${DEFAULT_REGISTRY_VERSION}`);
  });

  it('runs the Prometheus version the alert rules and dashboard queries are tested on (promtool)', () => {
    // "promtool, version 2.42.0+ds (branch: ...)": the Debian package's build of 2.42.0.
    const version = /version (\d+\.\d+\.\d+)/.exec(
      execFileSync('promtool', ['--version'], { encoding: 'utf8' }),
    )?.[1];
    expect(services.prometheus!.image).toBe(`prom/prometheus:v${version}`);
  });

  it('every service has a restart policy; long-running ones come back after a crash or reboot', () => {
    for (const [name, s] of Object.entries(services))
      expect([name, s.restart !== undefined]).toEqual([name, true]);
    for (const name of ['kafka', 'registry', 'processor', 'prometheus', 'grafana'])
      expect([name, services[name]!.restart]).toEqual([name, 'unless-stopped']);
    expect(services.init!.restart).toBe('no');
  });

  it('the simulator starts only once the processor is ready (it created the input topic)', () => {
    expect(simulator!.depends_on).toEqual({ processor: { condition: 'service_healthy' } });
    const probe = processor!.healthcheck!.test.join(' ');
    expect(probe).toContain(`http://localhost:${processor!.environment!.CG_HTTP_PORT}/readyz`);
  });

  it('Kafka has a listener the host can reach, advertised as localhost on a published port', () => {
    const env = kafka!.environment!;
    const advertised = String(env.KAFKA_ADVERTISED_LISTENERS).split(',');
    const host = advertised.find((l) => /^\w+:\/\/localhost:\d+$/.test(l));
    expect(host).toBeDefined();
    const [name, port] = [host!.split(':')[0]!, host!.split(':').pop()!];
    expect(String(env.KAFKA_LISTENERS).split(',')).toContain(`${name}://:${port}`);
    expect(String(env.KAFKA_LISTENER_SECURITY_PROTOCOL_MAP).split(',')).toContain(
      `${name}:PLAINTEXT`,
    );
    expect(kafka!.ports).toContain(`127.0.0.1:${port}:${port}`);
    // The containers keep using the in-network listener.
    expect(advertised).toContain('PLAINTEXT://kafka:9092');
    expect(processor!.environment!.KAFKA_BROKERS).toBe('kafka:9092');
  });

  it("the processor's and simulator's commands and environment are valid for the current CLI", () => {
    const program = buildProgram();
    const known = new Set<string>([
      ...Object.values(ENV_NAMES),
      ...Object.values(TOOL_SETTINGS).map((t) => t.env),
      ...SECRET_KEYS.map((k) => `${ENV_NAMES[k]}_FILE`),
    ]);
    for (const name of ['processor', 'simulator']) {
      const s = services[name]!;
      const [command, ...args] = s.command!;
      const sub = program.commands.find((c) => c.name() === command);
      expect([name, command, sub !== undefined]).toEqual([name, command, true]);
      const flags = new Set(sub!.options.map((o) => o.long));
      for (const a of args.filter((x) => x.startsWith('--')))
        expect([name, a, flags.has(a)]).toEqual([name, a, true]);
      for (const key of Object.keys(s.environment ?? {}))
        expect([name, key, known.has(key)]).toEqual([name, key, true]);
    }
  });

  it('publishes every port on 127.0.0.1 only', () => {
    const published = Object.entries(services).flatMap(([name, s]) =>
      (s.ports ?? []).map((p) => [name, p] as const),
    );
    expect(published.map(([name]) => name).sort()).toEqual(
      ['grafana', 'kafka', 'processor', 'prometheus', 'registry'].sort(),
    );
    for (const [name, p] of published)
      expect([name, p]).toEqual([name, expect.stringMatching(/^127\.0\.0\.1:\d+:\d+$/)]);
  });

  it("gives Grafana's anonymous visitors the Viewer role", () => {
    const env = services.grafana!.environment!;
    expect(env.GF_AUTH_ANONYMOUS_ENABLED).toBe('true');
    expect(env.GF_AUTH_ANONYMOUS_ORG_ROLE).toBe('Viewer');
  });

  /** The Dockerfile's `ENV NAME=value` lines. */
  const dockerEnv = (): Record<string, string> =>
    Object.fromEntries(
      [...readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8').matchAll(/^ENV (\w+)=(.*)$/gm)].map(
        (m) => [m[1]!, m[2]!],
      ),
    );

  it('the image binds all interfaces with /sessions off: it starts (no token needed), and would be refused with /sessions on', () => {
    const env = dockerEnv();
    expect(env).toMatchObject({ CG_HTTP_HOST: '0.0.0.0', CG_HTTP_SESSIONS: 'false' });
    expect(() => requireSafeHttp(loadConfig(env))).not.toThrow();
    expect(() => requireSafeHttp(loadConfig({ ...env, CG_HTTP_SESSIONS: 'true' }))).toThrow(
      ConfigError,
    );
  });

  it("the init service makes the sessions token and the key ring (0600, kept on a rerun); the processor's environment starts with them, the simulator signs with a SPILL key of the ring", () => {
    const init = services.init!;
    expect(init.volumes).toEqual(['keys:/keys']);
    expect(processor!.volumes).toEqual(['keys:/keys:ro']);
    expect(processor!.depends_on).toMatchObject({
      init: { condition: 'service_completed_successfully' },
    });
    // The init command, run for real by sh with the volume at a temporary directory.
    const keys = mkdtempSync(path.join(tmpdir(), 'cg-compose-keys-'));
    try {
      const script = init.command![0]!.replace(/\/keys\b/g, keys);
      expect(init.entrypoint).toEqual(['sh', '-c']);
      // As in the image: the working directory is the app's (bin/compaction-guard.js).
      const run = () => spawnSync('sh', ['-c', script], { cwd: ROOT, encoding: 'utf8' });
      expect(run().status).toBe(0);
      const token = readFileSync(path.join(keys, 'sessions-token'), 'utf8');
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      for (const f of ['sessions-token', 'ring.json', 'simulator.key', 'operator.key'])
        expect([f, statSync(path.join(keys, f)).mode & 0o777]).toEqual([f, 0o600]);
      const ring = readFileSync(path.join(keys, 'ring.json'), 'utf8');
      const second = run();
      expect([second.status, second.stdout]).toEqual([0, '']);
      expect(readFileSync(path.join(keys, 'sessions-token'), 'utf8')).toBe(token);
      expect(readFileSync(path.join(keys, 'ring.json'), 'utf8')).toBe(ring);

      const envOf = (s: Service) =>
        Object.fromEntries(
          Object.entries({ ...dockerEnv(), ...s.environment! }).map(([k, v]) => [
            k,
            String(v).replace(/^\/keys\//, `${keys}/`),
          ]),
        );
      const config = loadConfig(envOf(processor!));
      expect(config).toMatchObject({
        httpHost: '0.0.0.0',
        httpSessions: true,
        httpSessionsToken: token,
        trustedKeysFile: path.join(keys, 'ring.json'),
        allowUnsigned: false,
      });
      expect(() => requireSafeHttp(config)).not.toThrow();
      expect(() => requireAuthority(config)).not.toThrow();
      const trusted = loadKeyRing(config.trustedKeysFile!);
      expect([...trusted.values()].map((k) => [k.name, k.roles])).toEqual([
        ['simulator', ['SPILL']],
        ['operator', ['ACKNOWLEDGE']],
      ]);
      expect(simulator!.volumes).toEqual(['keys:/keys:ro']);
      const signing = loadSigningKey(toolSettings(envOf(simulator!)).signingKeyFile!);
      expect(trusted.get(signing.keyId)?.roles).toEqual(['SPILL']);
    } finally {
      rmSync(keys, { recursive: true, force: true });
    }
  });
});
