/**
 * Logs read as lines for people in a terminal and as JSON for machines (CG_LOG_FORMAT, default
 * auto: pretty when stdout is a terminal). Secrets are censored either way. Run in a child
 * process on the built logger, as `run` uses it (the format decides where lines go).
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

function logOnce(format: string): string {
  const script = `
    const { createLogger } = require('./dist/config/redact.js');
    createLogger('info', undefined, ${JSON.stringify(format)})
      .info({ assigned: [0, 1], password: 'hunter2' }, 'group joined');`;
  const run = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' });
  expect(run.status).toBe(0);
  return run.stdout;
}

describe('log format', () => {
  it('pretty: one readable line with time, level, message and fields, the secret censored', () => {
    const out = logOnce('pretty');
    expect(out.trimEnd().split('\n')).toHaveLength(1);
    expect(out).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: group joined \{"assigned":\[0,1\],"password":"\[REDACTED\]"\}\n$/,
    );
  });

  it('json, and auto when stdout is not a terminal: one JSON object per line', () => {
    for (const format of ['json', 'auto']) {
      const entry = JSON.parse(logOnce(format)) as Record<string, unknown>;
      expect(entry).toMatchObject({ level: 30, msg: 'group joined', password: '[REDACTED]' });
    }
  });
});
