/**
 * A minimal orchestrator using compaction-guard/client: the seed's incident, from the
 * orchestrator's side. Start the processor (`npm start`), then in another terminal:
 *
 *   npx tsx examples/orchestrator.ts
 *
 * (Against a cluster: set KAFKA_BROKERS and SCHEMA_REGISTRY_URL as for `compaction-guard run`,
 * and CG_SIGNING_KEY_FILE to a key with role SPILL in the processor's ring: the spill answers
 * are signed with it. Against `npm start` its development key is used.)
 */
import { FileSpillStore, GuardClient, GuardTimeoutError } from 'compaction-guard/client';

async function main(): Promise<void> {
  const client = new GuardClient(); // npm start's Kafka and key, or KAFKA_BROKERS, CG_SIGNING_KEY_FILE
  await client.connect();
  const session = client.session(`orchestrator-demo-${Date.now()}`);
  // The seed's policy: a 160k trigger equal to the 160k ceiling, a floor of 12 turns.
  const seed = { windowTokens: 200_000, triggerTokens: 160_000, ceilingTokens: 160_000 };
  const floor = { unit: 'TURNS', span: 12 } as const;
  await session.open({
    ...seed,
    floor,
    truncatorUnit: 'TURNS',
    coverage: 'STRICT',
    spill: 'ENABLED',
  });
  const transcript: string[] = []; // the orchestrator keeps the full transcript
  const turn = async (text: string, role: 'USER' | 'TOOL_CALL' | 'TOOL_RESULT', pin = false) => {
    transcript.push(text);
    await session.appendTurn({ role, tokens: 3000, pins: pin ? ['CONSTRAINT'] : [] });
  };
  await turn('Deploy the fix.', 'USER');
  await turn('Never restart the payments service during business hours.', 'USER', true);
  for (let i = 2; i < 52; i++) await turn(`tool step ${i}`, i % 2 ? 'TOOL_RESULT' : 'TOOL_CALL');
  await session.truncated({ unit: 'TURNS', range: { start: 0, end: 8 } }); // budget enforcement
  const request = { requestId: 'compact-1', summaryInput: { start: 8, end: 40 }, tailStart: 40 };
  try {
    const verdict = await session.requestCompaction(request, {
      onVerdict: (v) =>
        console.log(`verdict: ${v.decision} ${v.action} ${v.basis ?? ''} ${v.diagnostic ?? ''}`),
      spill: {
        store: new FileSpillStore(process.env.CG_SPILL_DIR ?? '.cache/spills'),
        transcript: (r) => transcript.slice(r.firstTurn, r.endTurn).join('\n'),
      },
    });
    if (verdict.decision === 'APPROVE') {
      // ... replace turns [8, 40) by their summary here, then say what was committed:
      await session.committed(request);
      console.log('compacted and committed');
    } else console.log('not compacting: the context stays as it is');
  } catch (e) {
    if (!(e instanceof GuardTimeoutError)) throw e;
    console.log(`${e.message}`); // no verdict, no compaction
  }
  await session.close();
  await client.close();
}

void main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exitCode = 1;
});
