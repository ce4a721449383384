import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

const ROOT = path.resolve(__dirname, '../..');

interface Service {
  build?: string | { context: string; dockerfile?: string };
  volumes?: string[];
  depends_on?: string[] | Record<string, unknown>;
  image?: string;
}

describe('docker-compose.yml', () => {
  const compose = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as {
    services: Record<string, Service>;
  };

  it('parses and declares Kafka, a registry, the processor, the simulator, Prometheus and Grafana', () => {
    expect(Object.keys(compose.services).sort()).toEqual(
      ['grafana', 'kafka', 'processor', 'prometheus', 'registry', 'simulator'].sort(),
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
});
