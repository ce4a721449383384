/**
 * The engine stays the pure core (docs/architecture.md): eslint.config.mjs forbids I/O imports,
 * the clock and randomness in src/engine. These tests lint a probe text as if it lived there, so
 * the rule cannot be switched off silently, and lint the real engine clean. (ESLint runs as a
 * child process: its config is an ES module, which Jest's VM cannot import.) The same rule keeps
 * kafkajs behind its boundary, src/kafka/kafkajs.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const ESLINT = path.join(ROOT, 'node_modules/eslint/bin/eslint.js');

interface Result {
  filePath: string;
  messages: { ruleId: string | null; message: string }[];
}

function lint(args: string[], stdin?: string): Result[] {
  const run = spawnSync(process.execPath, [ESLINT, '--format', 'json', ...args], {
    cwd: ROOT,
    input: stdin,
    encoding: 'utf8',
  });
  return JSON.parse(run.stdout) as Result[];
}

const PROBE = [
  "import { readFileSync } from 'node:fs';",
  "import { Kafka } from 'kafkajs';",
  "import { Metrics } from '../metrics/metrics';",
  'export const all = [readFileSync, Kafka, Metrics, Date.now(), Math.random(), process.env];',
  '',
].join('\n');

describe('src/engine is pure', () => {
  it('refuses node:, kafkajs and shell imports, the clock, randomness and process there', () => {
    const [result] = lint(['--stdin', '--stdin-filename', 'src/engine/probe.ts'], PROBE);
    const rules = (result?.messages ?? []).map((m) => m.ruleId);
    expect(rules.filter((r) => r === 'no-restricted-imports')).toHaveLength(3);
    expect(rules.filter((r) => r === 'no-restricted-properties')).toHaveLength(2);
    expect(rules.filter((r) => r === 'no-restricted-globals')).toHaveLength(1);
  }, 60_000);

  it('the same text is fine in the shell (src/kafka)', () => {
    // In the kafkajs boundary: elsewhere in the shell kafkajs comes through it (below).
    const [result] = lint(['--stdin', '--stdin-filename', 'src/kafka/kafkajs/probe.ts'], PROBE);
    expect(result?.messages).toEqual([]);
  }, 60_000);

  it('outside src/kafka/kafkajs, the shell reaches kafkajs only through that boundary', () => {
    const [result] = lint(['--stdin', '--stdin-filename', 'src/kafka/probe.ts'], PROBE);
    expect(result?.messages.map((m) => m.message)).toEqual([
      expect.stringContaining('import kafkajs through the boundary, src/kafka/kafkajs'),
    ]);
  }, 60_000);

  it('the engine as it is lints clean', () => {
    const results = lint(['src/engine']);
    expect(results.length).toBeGreaterThan(10);
    expect(results.flatMap((r) => r.messages.map((m) => `${r.filePath}: ${m.message}`))).toEqual(
      [],
    );
  }, 60_000);
});
