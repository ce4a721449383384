/** bin/compaction-guard.js in a clone that was never built (`npx compaction-guard` as a newcomer's first command). */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const LAUNCHER = path.resolve(__dirname, '../../bin/compaction-guard.js');

describe('the launcher', () => {
  it('without dist/ says in one line to build first and exits 2, with no module stack', () => {
    const clone = mkdtempSync(path.join(tmpdir(), 'cg-unbuilt-'));
    try {
      mkdirSync(path.join(clone, 'bin'));
      copyFileSync(LAUNCHER, path.join(clone, 'bin/compaction-guard.js'));
      const r = spawnSync(
        process.execPath,
        [path.join(clone, 'bin/compaction-guard.js'), '--help'],
        {
          encoding: 'utf8',
        },
      );
      expect(r.status).toBe(2);
      expect(r.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(/^compaction-guard: not built yet .*npm run build/),
      ]);
    } finally {
      rmSync(clone, { recursive: true, force: true });
    }
  });
});
