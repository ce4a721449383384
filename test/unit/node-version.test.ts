/**
 * One Node version everywhere: package.json's engines, the Node the npm scripts run on (the
 * `node` devDependency, which npm puts first on the scripts' PATH), the Docker image, the
 * README, and what every locked dependency declares it supports.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// semver is locked already (jest, typescript-eslint); its types are not installed.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const semver = require('semver') as { satisfies(version: string, range: string): boolean };

const root = join(__dirname, '../..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');
const pkg = JSON.parse(read('package.json')) as {
  engines: { node: string };
  devEngines?: { runtime?: { name: string; version: string; onFail: string } };
  devDependencies: Record<string, string>;
};
const lock = JSON.parse(read('package-lock.json')) as {
  packages: Record<string, { engines?: { node?: string } | string[] }>;
};
const toolchain = pkg.devDependencies.node!;
const major = toolchain.split('.')[0]!;

describe('the Node version', () => {
  it('of the npm scripts (the node devDependency) is one the engines field declares', () => {
    expect(toolchain).toMatch(/^\d+\.\d+\.\d+$/);
    expect(semver.satisfies(toolchain, pkg.engines.node)).toBe(true);
  });

  it('is a lower bound only: Node 24 (the active LTS) satisfies engines too', () => {
    expect(semver.satisfies('24.11.0', pkg.engines.node)).toBe(true);
  });

  it('the system Node that runs npm itself is declared as devEngines, so npx prints no EBADENGINE', () => {
    // npm skips the root package's engines check when it declares devEngines
    // (@npmcli/arborist build-ideal-tree.js): `npx compaction-guard` on a system Node 20 then
    // runs without npm's five-line warning, while the commands run on the toolchain Node.
    expect(pkg.devEngines?.runtime).toMatchObject({ name: 'node', onFail: 'warn' });
    expect(semver.satisfies('20.20.2', pkg.devEngines!.runtime!.version)).toBe(true);
  });

  it('is supported by every locked dependency that declares Node versions', () => {
    const unsupported = Object.entries(lock.packages)
      .map(([name, p]) => [name, Array.isArray(p.engines) ? undefined : p.engines?.node] as const)
      .filter(([, range]) => range !== undefined && !semver.satisfies(toolchain, range))
      .map(([name, range]) => `${name} needs ${range}`);
    expect(unsupported).toEqual([]);
  });

  it('is the one of the Docker image and the README', () => {
    const images = [...read('Dockerfile').matchAll(/^FROM node:(\d+)-/gm)].map((m) => m[1]);
    expect(images.length).toBeGreaterThan(0);
    expect(new Set(images)).toEqual(new Set([major]));
    expect(read('README.md')).toContain(`Node ${major}`);
    expect(read('README.md')).not.toMatch(new RegExp(`Needs Node (?!${major}\\b)\\d+`));
  });

  it('is the one this test runs on (npm test and npx jest use the toolchain, not the system Node)', () => {
    expect(process.versions.node).toBe(toolchain);
  });
});
