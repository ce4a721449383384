/**
 * contract §5 "Repeated requestId" (stored verdicts, REQUEST_ID_REUSED, the 16-requestId window)
 * and §3 malformed requests that are answered. Floor TURNS span 2, 10 turns of one unit each.
 * A processing clock distinct from occurredAt shows which stamps a repetition keeps.
 */
import type { EngineInput, MalformedRequest, Output, Policy } from '../../src/engine';
import { SessionBuilder } from '../support/sessionBuilder';
import {
  auditCodes,
  auditsOf,
  play,
  policyIn,
  reasonsOf,
  spillOf,
  verdictOf,
  verdictsOf,
} from '../support/engineHarness';

const SID = 'sess';
const clock = (_e: EngineInput, i: number) => 9_000_000 + i * 7;

function session(overrides: Partial<Policy> = {}): SessionBuilder {
  return new SessionBuilder(SID).open(policyIn('TURNS', 2, overrides)).turns(10, 1);
}

function run(events: readonly EngineInput[]) {
  return play(events, {}, clock);
}

/** Steps of the last two requests with `requestId`. */
function lastTwo(events: readonly EngineInput[], requestId: string) {
  const p = run(events);
  const idx = events
    .map((e, i) => ('requestId' in e && e.requestId === requestId ? i : -1))
    .filter((i) => i >= 0 && events[i]!.type === 'CompactionRequested');
  const first = namedAndStripped(p.steps[idx[idx.length - 2]!]!, events[idx[idx.length - 2]!]!);
  const second = namedAndStripped(p.steps[idx[idx.length - 1]!]!, events[idx[idx.length - 1]!]!);
  return { p, first, second };
}

/**
 * Every verdict names the request just received (rev 12), a repetition answered from the store
 * too: checked here, then left out, so the tests below compare what the store re-emits.
 */
function namedAndStripped<T extends { outputs: readonly Output[] }>(
  step: T,
  request: EngineInput,
): T {
  const outputs = step.outputs.map((o) => {
    if (o.record !== 'verdict') return o;
    expect(o.value.requestEventId).toBe((request as { eventId: string }).eventId);
    return { ...o, value: { ...o.value, requestEventId: null } };
  });
  return { ...step, outputs };
}

describe('repeated requestId with the same unit and ranges', () => {
  it('emits the stored verdict again, byte for byte (inputSeq, requestedAt, decidedAt too), and no spill request', () => {
    const b = session().request('r', 'TURNS', 0, 5, 6).request('r', 'TURNS', 0, 5, 6);
    const { first, second } = lastTwo(b.events, 'r');
    expect(first.outputs.map((o) => o.record)).toEqual(['verdict', 'spill-request']);
    expect(second.outputs.map((o) => o.record)).toEqual(['verdict']);
    expect(JSON.stringify(verdictOf(second))).toBe(JSON.stringify(verdictOf(first)));
    expect(verdictOf(second).inputSeq).toBe(b.events[11]!.seq);
  });

  it('also for an APPROVE', () => {
    const b = session().request('r', 'TURNS', 0, 6, 6).request('r', 'TURNS', 0, 6, 6);
    const { first, second } = lastTwo(b.events, 'r');
    expect(JSON.stringify(second.outputs)).toBe(JSON.stringify(first.outputs));
  });

  it('other requests in between do not count', () => {
    const b = session().request('r', 'TURNS', 0, 5, 6).request('q', 'TURNS', 0, 6, 6);
    b.request('r', 'TURNS', 0, 5, 6);
    const { first, second } = lastTwo(b.events, 'r');
    expect(verdictOf(second)).toEqual(verdictOf(first));
    expect(spillOf(second)).toBeNull();
  });

  it('a redelivery in between does not count', () => {
    const b = session().request('r', 'TURNS', 0, 5, 6);
    const turn = b.events[5]!;
    b.events.push(turn);
    b.request('r', 'TURNS', 0, 5, 6);
    const { first, second } = lastTwo(b.events, 'r');
    expect(verdictOf(second)).toEqual(verdictOf(first));
  });

  it('a malformed request in between does not count (it changes no state)', () => {
    const b = session().request('r', 'TURNS', 0, 5, 6);
    const bad: MalformedRequest = {
      type: 'MalformedRequest',
      sessionId: SID,
      seq: b.nextSeq,
      requestId: 'bad',
      eventId: 'bad-event',
      occurredAt: 1,
      error: 'x',
    };
    b.skipSeq();
    const events: EngineInput[] = [...b.events, bad];
    b.request('r', 'TURNS', 0, 5, 6);
    events.push(b.last);
    const { first, second } = lastTwo(events, 'r');
    expect(verdictOf(second)).toEqual(verdictOf(first));
  });

  it.each<[string, (b: SessionBuilder) => void]>([
    ['a turn', (b) => b.turns(1, 1)],
    ['an ignored SpillFailed (accepted: past step 1)', (b) => b.spillFailed('unrelated')],
    ['an ignored second SessionOpened', (b) => b.open(policyIn('TURNS', 2))],
    ['an empty truncation', (b) => b.truncate('TURNS', 3, 3)],
  ])('is decided afresh after %s: new stamps, a new spill request', (_n, between) => {
    const b = session().request('r', 'TURNS', 0, 5, 6);
    between(b);
    b.request('r', 'TURNS', 0, 5, 6);
    const req = b.last;
    const { first, second } = lastTwo(b.events, 'r');
    const v = verdictOf(second);
    expect(v.inputSeq).toBe(req.seq);
    expect(v.requestedAt).toBe(req.occurredAt);
    expect(v.decidedAt).not.toBe(verdictOf(first).decidedAt);
    expect(spillOf(second)?.spillRequestId).toBe(`${SID}:r:${req.seq}`);
    expect(auditsOf(second.outputs)).toEqual([]);
  });

  it('is decided afresh when the state changed: a spill in between turns the REFUSE into APPROVE', () => {
    const b = session().request('r', 'TURNS', 0, 5, 6);
    b.spilled(`${SID}:r:${b.last.seq}`, 'TURNS', 0, 10).request('r', 'TURNS', 0, 5, 6);
    expect(verdictOf(lastTwo(b.events, 'r').second)).toMatchObject({
      decision: 'APPROVE',
      basis: 'LOSSLESS_SPILL',
    });
  });

  it('is decided afresh after a gap revealed by another request', () => {
    const b = session().request('r', 'TURNS', 0, 6, 6);
    b.skipSeq().request('q', 'TURNS', 0, 6, 6).request('r', 'TURNS', 0, 6, 6);
    const { second } = lastTwo(b.events, 'r');
    expect(reasonsOf(verdictOf(second))).toEqual([{ code: 'EVENT_GAP', holes: [[0, 10]] }]);
  });

  it('is decided afresh when the repetition itself reveals a gap', () => {
    const b = session().request('r', 'TURNS', 0, 6, 6).skipSeq().request('r', 'TURNS', 0, 6, 6);
    const { second } = lastTwo(b.events, 'r');
    expect(verdictOf(second).decision).toBe('REFUSE');
  });

  it('is decided afresh after a conflict (its gap), even though the conflicting event was not applied', () => {
    const b = session().request('r', 'TURNS', 0, 6, 6);
    b.next({ seq: 2, eventId: 'x' }).turns(1, 1);
    b.request('r', 'TURNS', 0, 6, 6);
    const { second } = lastTwo(b.events, 'r');
    expect(verdictOf(second).decision).toBe('REFUSE');
  });

  it('after a fresh decision, the next repetition re-emits the new stored verdict', () => {
    const b = session().request('r', 'TURNS', 0, 5, 6).turns(1, 1);
    b.request('r', 'TURNS', 0, 5, 6).request('r', 'TURNS', 0, 5, 6);
    const { first, second } = lastTwo(b.events, 'r');
    expect(verdictOf(second)).toEqual(verdictOf(first));
    expect(spillOf(second)).toBeNull();
  });
});

describe('repeated requestId with another unit or other ranges', () => {
  it.each<[string, [string, number, number, number]]>([
    ['another summary input', ['TURNS', 0, 7, 6]],
    ['another tail start', ['TURNS', 0, 6, 5]],
    ['another unit', ['TOKENS', 0, 6, 6]],
  ])('%s: VIOLATION REQUEST_ID_REUSED and a fresh decision', (_n, [unit, s, e, t]) => {
    const b = session().request('r', 'TURNS', 0, 6, 6);
    b.request('r', unit as 'TURNS', s, e, t);
    const { first, second } = lastTwo(b.events, 'r');
    const [a, ...more] = auditsOf(second.outputs);
    expect(more).toEqual([]);
    expect(a).toMatchObject({ kind: 'VIOLATION', code: 'REQUEST_ID_REUSED', requestId: 'r' });
    const v = verdictOf(second);
    expect(v.inputSeq).toBe(b.last.seq);
    expect(v.decidedAt).not.toBe(verdictOf(first).decidedAt);
  });

  it('the fresh decision replaces the stored one', () => {
    const b = session().request('r', 'TURNS', 0, 6, 6);
    b.request('r', 'TURNS', 0, 5, 6).request('r', 'TURNS', 0, 5, 6);
    const { first, second } = lastTwo(b.events, 'r');
    expect(auditCodes(second.outputs)).toEqual([]);
    expect(verdictOf(second)).toEqual(verdictOf(first));
    // The approval of the original ranges was replaced: committing them is unapproved.
    const c = session().request('r', 'TURNS', 0, 6, 6).request('r', 'TURNS', 0, 5, 6);
    c.commit('r', 'TURNS', 0, 6, 6);
    expect(auditCodes(run(c.events).last.outputs)).toEqual(['COMMITTED_WITHOUT_APPROVAL']);
    // And the original ranges are now the "other" ones.
    b.request('r', 'TURNS', 0, 6, 6);
    expect(auditCodes(run(b.events).last.outputs)).toEqual(['REQUEST_ID_REUSED']);
  });
});

describe('the 16-requestId window', () => {
  function withOthers(n: number): SessionBuilder {
    const b = session().request('r0', 'TURNS', 0, 6, 6);
    for (let i = 1; i <= n; i++) b.request(`r${i}`, 'TURNS', 0, 6, 6);
    return b;
  }

  it('an approval is still known after 15 more requestIds', () => {
    const p = run(withOthers(15).commit('r0', 'TURNS', 0, 6, 6).events);
    expect(p.last.outputs).toEqual([]);
  });

  it('is forgotten after 16 more: its commit is COMMITTED_WITHOUT_APPROVAL', () => {
    const p = run(withOthers(16).commit('r0', 'TURNS', 0, 6, 6).events);
    expect(auditCodes(p.last.outputs)).toEqual(['COMMITTED_WITHOUT_APPROVAL']);
  });

  it('a forgotten requestId reused with other ranges is no REQUEST_ID_REUSED', () => {
    const b = withOthers(16).request('r0', 'TURNS', 0, 5, 6);
    expect(auditCodes(run(b.events).last.outputs)).toEqual([]);
  });
});

describe('malformed CompactionRequested (contract §3): dead-lettered and answered', () => {
  function malformed(seq: number, occurredAt: number | null = 1_234, sessionId = SID) {
    const m: MalformedRequest = {
      type: 'MalformedRequest',
      sessionId,
      seq,
      requestId: 'bad',
      eventId: 'bad-event',
      occurredAt,
      error: 'tailStart: expected a long',
    };
    return m;
  }

  it('is answered REFUSE, INVALID_REQUEST, HALT, rulesChecked [INVALID_REQUEST], no spill', () => {
    const b = session();
    const p = run([...b.events, malformed(b.nextSeq)]);
    expect(p.last.outputs.map((o) => o.record)).toEqual(['verdict']);
    const v = verdictOf(p.last);
    expect(v).toMatchObject({
      sessionId: SID,
      requestId: 'bad',
      requestEventId: 'bad-event',
      decision: 'REFUSE',
      basis: null,
      action: 'HALT',
      rulesChecked: ['INVALID_REQUEST'],
      spillRequestId: null,
      inputSeq: b.nextSeq,
      requestedAt: 1_234,
    });
    expect(reasonsOf(v)).toEqual([{ code: 'INVALID_REQUEST', holes: [] }]);
    expect(v.diagnostic).toMatch(/corrected request/);
  });

  it('has requestedAt null when occurredAt did not decode', () => {
    const b = session();
    expect(verdictOf(run([...b.events, malformed(b.nextSeq, null)]).last).requestedAt).toBeNull();
  });

  it('is answered for an unknown session too', () => {
    const v = verdictOf(run([malformed(0, 5, 'ghost')]).last);
    expect(v).toMatchObject({ decision: 'REFUSE', action: 'HALT', sessionId: 'ghost' });
  });

  it('takes its seq: the next event is no gap', () => {
    const b = session();
    const events: EngineInput[] = [...b.events, malformed(b.nextSeq)];
    b.skipSeq().request('r', 'TURNS', 0, 6, 6);
    events.push(b.last);
    const p = run(events);
    expect(p.last.notes).not.toContain('gap');
    expect(verdictOf(p.last).decision).toBe('APPROVE');
  });

  it('is not stored: no REQUEST_ID_REUSED for its requestId, its commit is unapproved', () => {
    const b = session();
    const events: EngineInput[] = [...b.events, malformed(b.nextSeq)];
    b.skipSeq().request('bad', 'TURNS', 0, 6, 6);
    events.push(b.last);
    expect(auditCodes(run(events).last.outputs)).toEqual([]);
    const c = session();
    const ev2: EngineInput[] = [...c.events, malformed(c.nextSeq)];
    c.skipSeq().commit('bad', 'TURNS', 0, 6, 6);
    ev2.push(c.last);
    expect(auditCodes(run(ev2).last.outputs)).toEqual(['COMMITTED_WITHOUT_APPROVAL']);
  });

  it('its eventId is not remembered: a corrected resend under the same seq is a conflict and is decided', () => {
    const b = session();
    const seq = b.nextSeq;
    const events: EngineInput[] = [...b.events, malformed(seq)];
    b.request('bad', 'TURNS', 0, 6, 6); // the corrected resend, same seq
    events.push(b.last);
    const p = run(events);
    expect(b.last.seq).toBe(seq);
    expect(p.last.outputs.map((o) => o.record)).toEqual(['audit', 'verdict', 'spill-request']);
    expect(auditCodes(p.last.outputs)).toEqual(['SEQ_CONFLICT']);
    expect(reasonsOf(verdictOf(p.last))).toEqual([{ code: 'EVENT_GAP', holes: [[0, 10]] }]);
    expect(verdictsOf(p.outputs)).toHaveLength(2);
  });

  it('with a seq jump reveals a gap like any event', () => {
    const b = session();
    const events: EngineInput[] = [...b.events, malformed(b.nextSeq + 1)];
    b.skipSeq(2).request('r', 'TURNS', 0, 6, 6);
    events.push(b.last);
    expect(reasonsOf(verdictOf(run(events).last))).toEqual([
      { code: 'EVENT_GAP', holes: [[0, 10]] },
    ]);
  });
});
