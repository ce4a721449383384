/**
 * A minimal orchestrator process for the resume test: it persists its session's snapshot before
 * every event (temp file + rename), resumes from it when the file exists, and appends turns
 * 40 calls at a time (more than the 32 seqs whose eventIds the processor remembers: the
 * session keeps at most MAX_IN_FLIGHT unacknowledged) until it is killed. Prints `turns N` after each acknowledged batch.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { GuardClient, type SessionSnapshot } from '../../../src/client';
import type { Config } from '../../../src/config/config';
import { policy } from './harness';

async function main(): Promise<void> {
  const config = JSON.parse(process.env.CG_TEST_CONFIG!) as Config;
  const file = process.env.CG_TEST_SNAPSHOT!;
  const sessionId = process.env.CG_TEST_SESSION!;
  const client = new GuardClient({ env: {}, config });
  await client.connect();
  const persist = (s: SessionSnapshot) => {
    writeFileSync(`${file}.tmp`, JSON.stringify(s));
    renameSync(`${file}.tmp`, file);
  };
  const session = existsSync(file)
    ? await client.resume(JSON.parse(readFileSync(file, 'utf8')) as SessionSnapshot, { persist })
    : client.session(sessionId, { persist });
  if (session.seq === 0) await session.open(policy('TURNS', 4));
  for (;;) {
    const batch = [];
    for (let i = 0; i < 40; i++)
      batch.push(session.appendTurn({ role: 'USER', tokens: 7 + (i % 5) }));
    await Promise.all(batch);
    process.stdout.write(`turns ${session.turns}\n`);
    // A pause between batches: all acknowledged, the last snapshot still lists the batch as pending.
    await new Promise((r) => setTimeout(r, 30));
  }
}

void main().catch((e: unknown) => {
  process.stderr.write(`${String((e as Error).stack ?? e)}\n`);
  process.exit(1);
});
