/**
 * compaction-guard/client against a real broker, registry and processor (startProcessor on
 * unique topics, with a trusted key ring: contract §4b): positions and seq, serialised concurrent
 * calls, one shared verdict consumer under 1,000 concurrent requests, a verdict timeout that
 * fails closed, the in-band spill loop and a separate spill worker, each signing its answers,
 * and what an unsigned spill or an unanswered spill request leads to.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import {
  FileSpillStore,
  GuardClosedError,
  SpillNotTrustedError,
  SpillWorker,
  GuardTimeoutError,
  GuardUsageError,
  GuardClient,
  type GuardedSession,
  type TurnPosition,
} from '../../src/client';
import type { Role, Unit } from '../../src/engine/events';
import { Rng } from '../../src/sim/prng';
import { until } from '../support/until';
import pino from 'pino';
import { VerdictListener } from '../../src/client/verdicts';
import { kafkaClient } from '../../src/kafka/client';
import {
  type Consumed,
  codecFor,
  kafka,
  readTopics,
  decodeOutput,
  produceRaw,
  testConfig,
} from './pipeline';
import {
  type Stack,
  type TestKeys,
  clientFor,
  policy,
  signedStack,
  testKeys,
  viewUntil,
} from './client/harness';

jest.setTimeout(240_000);

const ROLES: readonly Role[] = ['USER', 'ASSISTANT', 'TOOL_CALL', 'TOOL_RESULT'];

describe('GuardClient on a real Kafka, registry and processor with a trusted key ring', () => {
  let s: Stack;
  let keys: TestKeys;
  beforeAll(async () => {
    keys = testKeys();
    s = await signedStack(keys);
  });
  afterAll(async () => {
    await s?.stop();
  });

  it.each<Unit>(['TURNS', 'TOKENS', 'MESSAGES'])(
    'positions and seq stay right over 150 turns of random sizes (floor unit %s): the processor sees no gap and approves a compaction at the computed positions',
    async (unit) => {
      const rng = new Rng(unit.length);
      const session = s.client.session(`pos-${unit}-${s.config.groupId}`);
      await session.open(policy(unit, 4));
      let tokens = 0;
      let messages = 0;
      for (let i = 0; i < 150; i++) {
        const size = { tokens: rng.between(1, 900), messages: rng.between(1, 3) };
        const p = await session.appendTurn({ role: ROLES[i % 4]!, ...size });
        expect(p).toEqual({
          turn: i,
          tokens: { start: tokens, end: tokens + size.tokens },
          messages: { start: messages, end: messages + size.messages },
        });
        tokens += size.tokens;
        messages += size.messages;
      }
      const head = session.head(unit);
      const t = session.startOf(140, unit);
      const c1 = { requestId: 'c1', summaryInput: { start: 0, end: t }, tailStart: t };
      const v1 = await session.requestCompaction(c1);
      expect(v1).toMatchObject({ decision: 'APPROVE', basis: 'INVARIANT_HOLDS', inputSeq: 151 });
      await session.committed(c1);
      // A second compaction reads the first summary (start 0) and the verbatim turns up to t2.
      await session.appendTurn({ role: 'USER', tokens: 50, messages: 1 });
      const t2 = session.startOf(146, unit);
      const v2 = await session.requestCompaction({
        requestId: 'c2',
        summaryInput: { start: 0, end: t2 },
        tailStart: t2,
      });
      expect(v2).toMatchObject({ decision: 'APPROVE', basis: 'INVARIANT_HOLDS', inputSeq: 154 });
      const view = await viewUntil(s, session.sessionId, (v) => v.lastSeq === 154);
      expect(view).toMatchObject({
        lastSeq: 154,
        gapHead: null,
        head: { TURNS: 151, TOKENS: tokens + 50, MESSAGES: messages + 1 },
        verbatimStart: t,
      });
      expect(head).toBe(unit === 'TURNS' ? 150 : unit === 'TOKENS' ? tokens : messages);
    },
  );

  it('concurrent calls on one session are sent in call order: consecutive positions and seqs, no gap', async () => {
    const session = s.client.session(`conc-${s.config.groupId}`);
    const opened = session.open(policy('TURNS', 4));
    const turns: Promise<TurnPosition>[] = [];
    for (let i = 0; i < 120; i++) turns.push(session.appendTurn({ role: 'USER', tokens: 10 + i }));
    // Issued before turns 120.. and after 0..119: it must see exactly 120 turns.
    const verdict = session.requestCompaction({
      requestId: 'mid',
      summaryInput: { start: 0, end: 116 },
      tailStart: 116,
    });
    for (let i = 120; i < 130; i++)
      turns.push(session.appendTurn({ role: 'ASSISTANT', tokens: 5 }));
    await opened;
    const positions = await Promise.all(turns);
    expect(positions.map((p) => p.turn)).toEqual([...Array(130).keys()]);
    expect(
      positions.every((p, i) => i === 0 || p.tokens.start === positions[i - 1]!.tokens.end),
    ).toBe(true);
    expect(await verdict).toMatchObject({ decision: 'APPROVE', inputSeq: 121 });
    const view = await viewUntil(s, session.sessionId, (v) => v.lastSeq === 131);
    expect(view).toMatchObject({ gapHead: null, head: { TURNS: 130 } });
  });

  it('one verdict consumer serves 1,000 concurrent requests across 250 sessions, each request its own verdict', async () => {
    const sessions: GuardedSession[] = [];
    for (let i = 0; i < 250; i++) sessions.push(s.client.session(`many-${i}-${s.config.groupId}`));
    await Promise.all(
      sessions.map(async (session) => {
        await session.open(policy('TURNS', 2));
        for (let t = 0; t < 8; t++) await session.appendTurn({ role: 'USER', tokens: 100 });
      }),
    );
    // Per session, 4 requests: tails 6 and 4 approve; tail 7 leaves the floor of 2 below the
    // tail (TAIL_BELOW_FLOOR) and an input ending at 2 leaves a seam hole: both refuse.
    const asks = [
      { tail: 6, end: 6, decision: 'APPROVE' },
      { tail: 7, end: 7, decision: 'REFUSE', code: 'TAIL_BELOW_FLOOR' },
      { tail: 4, end: 4, decision: 'APPROVE' },
      { tail: 5, end: 2, decision: 'REFUSE', code: 'SEAM_HOLE' },
    ] as const;
    const started = s.client.waiting;
    const all = sessions.flatMap((session, i) =>
      asks.map((a, k) =>
        session
          .requestCompaction({
            requestId: `r${k}`,
            summaryInput: { start: 0, end: a.end },
            tailStart: a.tail,
          })
          .then((v) => ({ v, i, k })),
      ),
    );
    const results = await Promise.all(all);
    expect(results).toHaveLength(1000);
    for (const { v, i, k } of results) {
      const a = asks[k]!;
      expect(v.sessionId).toBe(sessions[i]!.sessionId);
      expect(v.requestId).toBe(`r${k}`);
      expect(v.inputSeq).toBe(9 + k);
      expect(v.decision).toBe(a.decision);
      if ('code' in a) expect(v.reasons.map((r) => r.code)).toContain(a.code);
    }
    expect(s.client.waiting).toBe(started);
  });

  it("the spill loop: REFUSE/SPILL, the transcript spilled to a file, its SpillCompleted signed by the client's key, APPROVE with basis LOSSLESS_SPILL; the file reads back byte-identical", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cg-spill-'));
    try {
      const store = new FileSpillStore(dir);
      const session = s.client.session(`spill-${s.config.groupId}`);
      await session.open(policy('TURNS', 12));
      const transcript: string[] = [];
      for (let t = 0; t < 52; t++) {
        const text = t === 1 ? 'Never touch the prod database.' : `turn ${t} ✓ ${'x'.repeat(t)}`;
        transcript.push(text);
        await session.appendTurn({
          role: t % 2 ? 'TOOL_RESULT' : 'TOOL_CALL',
          tokens: 100,
          pins: t === 1 ? ['CONSTRAINT'] : [],
        });
      }
      await session.truncated({ unit: 'TURNS', range: { start: 0, end: 8 } });
      const handles: string[] = [];
      const read = (r: { firstTurn: number; endTurn: number }) =>
        JSON.stringify(transcript.slice(r.firstTurn, r.endTurn));
      const verdict = await session.requestCompaction(
        { requestId: 'compact-1', summaryInput: { start: 8, end: 40 }, tailStart: 40 },
        {
          spill: {
            transcript: read,
            store: {
              write: async (w) => {
                const h = await store.write(w);
                handles.push(h);
                return h;
              },
              read: (h) => store.read(h),
            },
          },
        },
      );
      expect(verdict).toMatchObject({
        decision: 'APPROVE',
        basis: 'LOSSLESS_SPILL',
        action: 'NONE',
      });
      expect(handles).toHaveLength(1);
      expect(handles[0]).toMatch(/^file:\/\/.*#sha256=[0-9a-f]{64}$/);
      const back = await store.read(handles[0]!);
      expect(back.equals(Buffer.from(read({ firstTurn: 0, endTurn: 52 }), 'utf8'))).toBe(true);
      const verdicts = await readTopics(
        [s.config.verdictTopic],
        (rs) => rs.filter((r) => r.key === session.sessionId).length >= 2,
      );
      const mine = verdicts
        .filter((r) => r.key === session.sessionId)
        .map((r) => decodeOutput(s.config, r));
      expect(mine[0]).toMatchObject({ decision: 'REFUSE', action: 'SPILL' });
      const codes = mine[0]!.record === 'verdict' ? mine[0]!.reasons.map((r) => r.code) : [];
      expect(codes).toEqual(expect.arrayContaining(['EVICTED_PINNED', 'EVICTED_UNCOVERED']));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a separate spill worker answers out of band (seq null), signed with its own key: the orchestrator asks again and gets APPROVE LOSSLESS_SPILL; its own sequence is untouched', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cg-worker-'));
    const transcripts = new Map<string, string[]>();
    const worker = new SpillWorker(s.client, {
      signingKey: keys.spillService.key,
      store: new FileSpillStore(dir),
      groupId: `workers-${s.config.groupId}`,
      // One piece per turn held, placed at its turn (the sessions here count in TURNS).
      source: (r) =>
        transcripts.get(r.sessionId)?.map((line, turn) => ({
          positions: { TURNS: { start: turn, end: turn + 1 } },
          content: line,
        })) ?? null,
    });
    await worker.start();
    try {
      const session = s.client.session(`oob-${s.config.groupId}`);
      await session.open(policy('TURNS', 12));
      transcripts.set(session.sessionId, []);
      for (let t = 0; t < 52; t++) {
        transcripts.get(session.sessionId)!.push(`turn ${t}`);
        await session.appendTurn({ role: 'USER', tokens: 10, pins: t === 1 ? ['CONSTRAINT'] : [] });
      }
      await session.truncated({ unit: 'TURNS', range: { start: 0, end: 8 } });
      const seen: string[] = [];
      const verdict = await session.requestCompaction(
        { requestId: 'c', summaryInput: { start: 8, end: 40 }, tailStart: 40 },
        {
          awaitSpill: { pollMs: 200, timeoutMs: 30_000 },
          onVerdict: (v) => seen.push(`${v.decision}/${v.action}`),
        },
      );
      expect(verdict).toMatchObject({ decision: 'APPROVE', basis: 'LOSSLESS_SPILL' });
      expect(seen[0]).toBe('REFUSE/SPILL');
      expect(worker.answered).toBeGreaterThanOrEqual(1);
      // The worker's SpillCompleted took no seq: the processor's last seq is the orchestrator's.
      const view = await viewUntil(s, session.sessionId, (v) => v.lastSeq === session.seq - 1);
      expect(view).toMatchObject({
        gapHead: null,
        spilled: [{ unit: 'TURNS', start: 0, end: 52 }],
      });
    } finally {
      await worker.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a spill request the worker could not answer (its answer was not sent) is not committed: the next worker of the group answers it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cg-worker-'));
    const groupId = `workers-retry-${s.config.groupId}`;
    const session = s.client.session(`unanswered-${s.config.groupId}`);
    const spilled: string[] = [];
    let written = Buffer.alloc(0);
    // Silent: kafkajs logs every failed attempt of the first worker at error.
    let first: GuardClient | null = await clientFor(s.config, {
      signingKey: null,
      logger: pino({ level: 'silent' }),
    });
    const failing = new SpillWorker(first, {
      signingKey: keys.spillService.key,
      groupId,
      source: (r) => [{ positions: { TURNS: r.range }, content: 'turns' }],
      store: {
        // The write works, then the worker's client goes away: its SpillCompleted cannot be sent.
        write: async (w) => {
          written = Buffer.from(w.content);
          await first?.close();
          first = null;
          spilled.push('first');
          return 'file:///lost#sha256=' + '0'.repeat(64);
        },
        // The read-back finds what was written: the answer fails only in the sending.
        read: () => Promise.resolve(written),
      },
    });
    await failing.start();
    try {
      await session.open(policy('TURNS', 12));
      for (let t = 0; t < 52; t++)
        await session.appendTurn({ role: 'USER', tokens: 10, pins: t === 1 ? ['CONSTRAINT'] : [] });
      await session.truncated({ unit: 'TURNS', range: { start: 0, end: 8 } });
      const request = { requestId: 'c', summaryInput: { start: 8, end: 40 }, tailStart: 40 };
      expect(await session.requestCompaction(request)).toMatchObject({ action: 'SPILL' });
      await until('the first worker tried', async () => (spilled.length > 0 ? true : undefined));
      expect(failing.answered).toBe(0);
    } finally {
      await failing.stop().catch(() => undefined);
    }
    // Nothing committed for the group: the request is still to be answered.
    const admin = kafka.admin();
    await admin.connect();
    const committed = await admin.fetchOffsets({ groupId, topics: [s.config.spillTopic] });
    await admin.disconnect();
    expect(committed[0]!.partitions.map((p) => p.offset)).toEqual(
      committed[0]!.partitions.map(() => '-1'),
    );
    const second = new SpillWorker(s.client, {
      signingKey: keys.spillService.key,
      groupId,
      store: new FileSpillStore(dir),
      source: (r) => [
        { positions: { TURNS: r.range }, content: `turns ${r.range.start}-${r.range.end}` },
      ],
    });
    await second.start();
    try {
      const verdict = await session.requestCompaction(
        { requestId: 'c', summaryInput: { start: 8, end: 40 }, tailStart: 40 },
        { awaitSpill: { pollMs: 200, timeoutMs: 60_000 } },
      );
      expect(verdict).toMatchObject({ decision: 'APPROVE', basis: 'LOSSLESS_SPILL' });
      expect(second.answered).toBeGreaterThanOrEqual(1);
    } finally {
      await second.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('under the ring, a spill sent unsigned (a client with no key), in band or out of band over [0, 2^52 − 1), heals nothing: UNAUTHORIZED_EVENT (no signature), the spill loop fails naming CG_SIGNING_KEY_FILE, and the request stays refused', async () => {
    const unsigned = await clientFor(s.config, { signingKey: null });
    const dir = mkdtempSync(path.join(tmpdir(), 'cg-unsigned-'));
    try {
      const session = unsigned.session(`unsigned-${s.config.groupId}`);
      await session.open(policy('TURNS', 12));
      for (let t = 0; t < 52; t++)
        await session.appendTurn({ role: 'USER', tokens: 10, pins: t === 1 ? ['CONSTRAINT'] : [] });
      await session.truncated({ unit: 'TURNS', range: { start: 0, end: 8 } });
      // The retry after the unsigned spill is still REFUSE/SPILL: the loop fails at once, naming
      // the fix (src/client/spillAnswerCheck.ts), instead of returning that refusal.
      const seen: string[] = [];
      await expect(
        session.requestCompaction(
          { requestId: 'c', summaryInput: { start: 8, end: 40 }, tailStart: 40 },
          {
            spill: { store: new FileSpillStore(dir), transcript: () => 'all of it', maxSpills: 1 },
            onVerdict: (v) => seen.push(`${v.decision}/${v.action}`),
          },
        ),
      ).rejects.toThrow(SpillNotTrustedError);
      expect(seen).toEqual(['REFUSE/SPILL', 'REFUSE/SPILL']);
      const view = await viewUntil(s, session.sessionId, (v) =>
        (v.lastViolations as { code: string }[]).some((a) => a.code === 'UNAUTHORIZED_EVENT'),
      );
      expect(view).toMatchObject({
        spilled: [],
        lastViolations: [
          expect.objectContaining({
            code: 'UNAUTHORIZED_EVENT',
            message: expect.stringMatching(/SpillCompleted .* not applied: no signature/),
          }),
        ],
      });
      // The first attack: an out-of-band SpillCompleted over [0, 2^52 − 1) with any
      // handle, by someone who can write the topic. Then a request asks whether it healed.
      await unsigned.outOfBand({
        type: 'SpillCompleted',
        sessionId: session.sessionId,
        spillRequestId: 'anything',
        handle: 'file:///nothing-was-stored',
        unit: 'TURNS',
        range: { start: 0, end: 4_503_599_627_370_495 },
      });
      await viewUntil(s, session.sessionId, (v) => (v.lastViolations as unknown[]).length === 2);
      const again = await session.requestCompaction({
        requestId: 'c2',
        summaryInput: { start: 8, end: 40 },
        tailStart: 40,
      });
      expect(again).toMatchObject({ decision: 'REFUSE', action: 'SPILL' });
      expect(await s.view(session.sessionId)).toMatchObject({ spilled: [] });
    } finally {
      await unsigned.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("an operator's out-of-band LossAcknowledged is the way out of a HALT; the orchestrator's seq carries on", async () => {
    const session = s.client.session(`ack-${s.config.groupId}`);
    await session.open(policy('TURNS', 2, 'DISABLED'));
    for (let t = 0; t < 10; t++) await session.appendTurn({ role: 'USER', tokens: 10 });
    await session.truncated({ unit: 'TURNS', range: { start: 0, end: 3 } });
    const request = { requestId: 'c', summaryInput: { start: 3, end: 6 }, tailStart: 6 };
    expect(await session.requestCompaction(request)).toMatchObject({
      decision: 'REFUSE',
      action: 'HALT',
    });
    // Signed by the operator's key: the client's own (SPILL only) may not write a loss off.
    await s.client.outOfBand(
      {
        type: 'LossAcknowledged',
        sessionId: session.sessionId,
        unit: 'TURNS',
        range: { start: 0, end: 3 },
        by: 'oncall@example.com',
        reason: 'turns 0-2 were small talk',
      },
      undefined,
      { signingKey: keys.operator.key },
    );
    // Out of band and in band are not ordered with each other: ask until the write-off counts.
    let verdict = await session.requestCompaction(request);
    for (let i = 0; i < 20 && verdict.decision !== 'APPROVE'; i++) {
      await new Promise((r) => setTimeout(r, 200));
      verdict = await session.requestCompaction(request);
    }
    expect(verdict).toMatchObject({ decision: 'APPROVE', basis: 'LOSS_ACKNOWLEDGED' });
    const view = await viewUntil(s, session.sessionId, (v) => v.lastSeq === session.seq - 1);
    expect(view).toMatchObject({ gapHead: null });
  });

  it("a forged request under the victim's seq and requestId gets its own verdict (APPROVE); the client takes only the verdict naming its own eventId (REFUSE)", async () => {
    const session = s.client.session(`forged-${s.config.groupId}`);
    await session.open(policy('TURNS', 2));
    for (let t = 0; t < 10; t++) await session.appendTurn({ role: 'USER', tokens: 10 });
    const seq = session.seq;
    const victimEventId = `victim-${s.config.groupId}`;
    // A verdict consumer as the client's own (its VerdictListener), the wait registered before
    // sending, as a session's request registers it.
    const codec = codecFor(s.config);
    const listener = new VerdictListener(
      await kafkaClient(
        s.config.brokers,
        `forged-${s.config.groupId}`,
        pino({ level: 'warn' }),
        s.config,
      ),
      codec,
      s.config.verdictTopic,
      `forged-${s.config.groupId}`,
      pino({ level: 'warn' }),
    );
    await listener.start();
    const mine = listener.expect(session.sessionId, 'c', victimEventId);
    const request = (eventId: string, tailStart: number) => ({
      key: session.sessionId,
      value: JSON.stringify({
        type: 'CompactionRequested',
        sessionId: session.sessionId,
        seq,
        eventId,
        occurredAt: Date.now(),
        requestId: 'c',
        unit: 'TURNS',
        summaryInput: { start: 0, end: tailStart },
        tailStart,
      }),
    });
    // The forger's record comes first at the seq (decided on the honest state: a summary of
    // [0,8) with the floor kept approves); the victim's own at the same seq is then a conflict.
    await produceRaw(s.config, [request('forged', 8), request(victimEventId, 8)]);
    const verdict = await mine.finally(async () => {
      await listener.stop();
      codec.close();
    });
    expect(verdict).toMatchObject({
      requestId: 'c',
      inputSeq: seq,
      requestEventId: victimEventId,
      decision: 'REFUSE',
    });
    // Both verdicts are on the topic under the same session, requestId and inputSeq: matching by
    // those (as the client did before rev 12) could have taken the forger's APPROVE.
    const ofC = (rs: Consumed[]) =>
      rs
        .filter((r) => r.key === session.sessionId)
        .map((r) => decodeOutput(s.config, r))
        .flatMap((v) => (v.record === 'verdict' && v.requestId === 'c' ? [v] : []));
    const verdicts = ofC(
      await readTopics([s.config.verdictTopic], (rs) => ofC(rs).length >= 2, 30_000),
    );
    expect(verdicts.map((v) => [v.requestEventId, v.inputSeq, v.decision])).toEqual([
      ['forged', seq, 'APPROVE'],
      [victimEventId, seq, 'REFUSE'],
    ]);
  });

  it("format 'json': events as JSON records are decided the same (APPROVE at the same positions)", async () => {
    const json = await clientFor(s.config, { format: 'json' });
    try {
      const session = json.session(`json-${s.config.groupId}`);
      await session.open(policy('TOKENS', 100));
      for (let t = 0; t < 10; t++) await session.appendTurn({ role: 'USER', tokens: 50 });
      const t = session.startOf(8, 'TOKENS');
      expect(t).toBe(400);
      const v = await session.requestCompaction({
        summaryInput: { start: 0, end: t },
        tailStart: t,
      });
      expect(v).toMatchObject({ decision: 'APPROVE', basis: 'INVARIANT_HOLDS', inputSeq: 11 });
    } finally {
      await json.close();
    }
  });

  it('bad use is refused before anything is sent, with the field named', async () => {
    const session = s.client.session(`usage-${s.config.groupId}`);
    await expect(session.appendTurn({ role: 'USER', tokens: 10 })).rejects.toThrow(
      /open\(policy\) first/,
    );
    await session.open(policy('TURNS', 2));
    await expect(session.appendTurn({ role: 'USER' } as never)).rejects.toMatchObject({
      name: 'GuardUsageError',
      field: 'tokens',
    });
    await expect(session.appendTurn({ role: 'USER', tokens: 0 })).rejects.toThrow(GuardUsageError);
    await expect(session.appendTurn({ role: 'NARRATOR' as Role, tokens: 3 })).rejects.toThrow(
      /role/,
    );
    await session.appendTurn({ role: 'USER', tokens: 10 });
    await expect(
      session.requestCompaction({ summaryInput: { start: 0, end: 1 }, tailStart: 2 }),
    ).rejects.toMatchObject({
      field: 'tailStart',
      message: expect.stringMatching(/beyond the head \(1 TURNS\)/),
    });
    await expect(
      session.requestCompaction({ summaryInput: { start: 1, end: 0 }, tailStart: 1 }),
    ).rejects.toMatchObject({ field: 'summaryInput' });
    await session.close();
    await expect(session.appendTurn({ role: 'USER', tokens: 10 })).rejects.toThrow(
      GuardClosedError,
    );
    // Only SessionOpened, one turn and SessionClosed reached the processor: seqs 0..2, no gap.
    const view = await viewUntil(s, session.sessionId, (v) => v.lastSeq === 2);
    expect(view).toMatchObject({ gapHead: null, head: { TURNS: 1 } });
  });
});

describe('GuardClient without a processor', () => {
  it('a verdict that does not come in time is a GuardTimeoutError (fail closed), and the client stops waiting for it', async () => {
    const c = testConfig();
    const client = await clientFor(c, { verdictTimeoutMs: 1500 });
    try {
      const session = client.session('lonely');
      await session.open(policy('TURNS', 1));
      await session.appendTurn({ role: 'USER', tokens: 5 });
      const t0 = Date.now();
      const err = await session
        .requestCompaction({ requestId: 'r', summaryInput: { start: 0, end: 1 }, tailStart: 1 })
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(err).toBeInstanceOf(GuardTimeoutError);
      expect(err).toMatchObject({ sessionId: 'lonely', requestId: 'r', timeoutMs: 1500 });
      expect(Date.now() - t0).toBeGreaterThanOrEqual(1400);
      expect(client.waiting).toBe(0);
    } finally {
      await client.close();
    }
    expect(() => client.session('after')).toThrow(GuardClosedError);
  });

  it('closing the client fails the requests still waiting (GuardClosedError: no verdict, no compaction); the same requestId twice at once is bad use', async () => {
    const client = await clientFor(testConfig(), { verdictTimeoutMs: 60_000 });
    const session = client.session('closing');
    await session.open(policy('TURNS', 1));
    await session.appendTurn({ role: 'USER', tokens: 5 });
    const ask = { requestId: 'r', summaryInput: { start: 0, end: 1 }, tailStart: 1 };
    const waiting = session.requestCompaction(ask).then(
      () => null,
      (e: unknown) => e,
    );
    await expect(session.requestCompaction(ask)).rejects.toMatchObject({
      name: 'GuardUsageError',
      field: 'requestId',
    });
    const t0 = Date.now();
    await client.close();
    expect(await waiting).toBeInstanceOf(GuardClosedError);
    expect(Date.now() - t0).toBeLessThan(30_000);
  });

  it('connect fails within seconds, naming the setting, when the broker or the registry cannot be reached', async () => {
    const t0 = Date.now();
    await expect(clientFor(testConfig({ brokers: ['127.0.0.1:1'] }))).rejects.toThrow(
      /no Kafka broker answered at 127\.0\.0\.1:1 .*check KAFKA_BROKERS/,
    );
    await expect(clientFor(testConfig({ registryUrl: 'http://127.0.0.1:2' }))).rejects.toThrow(
      /schema registry at http:\/\/127\.0\.0\.1:2 \(SCHEMA_REGISTRY_URL\)/,
    );
    expect(Date.now() - t0).toBeLessThan(30_000);
  });

  it('close() during connect() waits for it, then closes what it opened', async () => {
    const client = new GuardClient({ env: {}, config: testConfig() });
    const connecting = client.connect();
    expect(client.state).toBe('connecting');
    await client.close();
    await connecting;
    expect(client.state).toBe('closed');
    expect(() => client.session('after')).toThrow(GuardClosedError);
  });

  it('a connect that fails ends the client closed, with the coded error of the step that failed', async () => {
    for (const [config, code] of [
      [testConfig({ brokers: ['127.0.0.1:1'] }), 'KAFKA_UNREACHABLE'],
      [testConfig({ registryUrl: 'http://127.0.0.1:2' }), 'REGISTRY_UNREACHABLE'],
    ] as const) {
      const client = new GuardClient({ env: {}, config });
      await expect(client.connect()).rejects.toMatchObject({ name: 'StartupError', code });
      expect(client.state).toBe('closed');
      expect(() => client.session('after')).toThrow(GuardClosedError);
      await client.close(); // nothing left to close
    }
  });
});
