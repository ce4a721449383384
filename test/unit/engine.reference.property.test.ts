/**
 * Differential test: the engine against an independent, naive model of contract §4–§5
 * (test/support/referenceModel.ts, boolean arrays over a small universe), on generated streams
 * with gaps, conflicts, redeliveries, unknown sessions, foreign units, spills, failures,
 * acknowledgements, closes and malformed requests. Per event: the same audit codes (and the
 * ranges the contract names exactly), the same verdict fields (not the message texts), the same spill
 * request, and the same state (T, S, V, P, A0, A1, X, pins, heads, Hg, seq memory, spill-failed,
 * pending request).
 */
import fc from 'fast-check';
import { heads } from '../../src/engine/state';
import { rememberedIds } from '../../src/engine/sequence';
import {
  type EngineInput,
  type Output,
  type SessionState,
  type Unit,
  engineOptions,
  evolve,
} from '../../src/engine';
import {
  chaosStream,
  healingStream,
  memoryStream,
  openedChaosStream,
  unknownHealingStream,
} from '../support/arbitraries';
import { pairs } from '../support/engineHarness';
import {
  type Bits,
  type ModelOutput,
  ReferenceSession,
  universeFor,
} from '../support/referenceModel';

const OPTIONS = engineOptions();
/** Audit codes whose `ranges` the contract pins down: the lost, missing or acknowledged positions. */
const RANGED = new Set([
  'PINNED_EVICTED',
  'CONTENT_EVICTED',
  'SPILL_INCOMPLETE',
  'LOSS_ACKNOWLEDGED',
]);

function fromEngine(o: Output): ModelOutput {
  if (o.record === 'audit') {
    const a = o.value;
    return {
      record: 'audit',
      kind: a.kind,
      code: a.code,
      requestId: a.requestId,
      ranges: RANGED.has(a.code) ? a.ranges.map((r) => [r.start, r.end]) : null,
    };
  }
  if (o.record === 'verdict') {
    const v = o.value;
    const units = new Set(v.reasons.flatMap((r) => r.holes.map((h) => h.unit)));
    return {
      record: 'verdict',
      value: {
        requestId: v.requestId,
        decision: v.decision,
        basis: v.basis,
        action: v.action,
        reasons: v.reasons.map((r) => ({
          code: r.code,
          holes: r.holes.map((h) => [h.start, h.end]),
        })),
        rulesChecked: v.rulesChecked,
        spillRequestId: v.spillRequestId,
        inputSeq: v.inputSeq,
        requestedAt: v.requestedAt,
        decidedAt: v.decidedAt,
        holeUnit: (units.size === 1 ? [...units][0] : 'TURNS') as Unit,
      },
    };
  }
  const r = o.value;
  return {
    record: 'spill-request',
    value: {
      spillRequestId: r.spillRequestId,
      unit: r.unit,
      range: r.range,
      holes: r.holes.map((h) => [h.start, h.end]),
    },
  };
}

/** The model's outputs, with a verdict's holeUnit only kept where it names holes. */
function normalize(out: ModelOutput[]): ModelOutput[] {
  return out.map((o) =>
    o.record === 'verdict' && o.value.reasons.every((r) => r.holes.length === 0)
      ? { ...o, value: { ...o.value, holeUnit: 'TURNS' as Unit } }
      : o,
  );
}

function runsOf(m: ReferenceSession, b: Bits): [number, number][] {
  return m.u.runs(b);
}

function perUnit(
  m: ReferenceSession,
  sets: Partial<Record<Unit, Bits>>,
): Partial<Record<Unit, [number, number][]>> {
  const out: Partial<Record<Unit, [number, number][]>> = {};
  for (const [k, v] of Object.entries(sets)) {
    const r = runsOf(m, v);
    if (r.length > 0) out[k as Unit] = r;
  }
  return out;
}

function enginePerUnit(
  sets: Partial<Record<Unit, readonly number[]>>,
): Partial<Record<Unit, [number, number][]>> {
  const out: Partial<Record<Unit, [number, number][]>> = {};
  for (const [k, v] of Object.entries(sets)) if (v && v.length > 0) out[k as Unit] = pairs(v);
  return out;
}

function modelView(m: ReferenceSession) {
  const s = m.s;
  return {
    known: s.policy !== null,
    lastSeq: s.lastSeq,
    seqs: [...s.ids.keys()].sort((a, b) => a - b),
    gapHead: s.Hg,
    head: s.head,
    verbatimStart: s.V,
    pins: runsOf(m, s.pins),
    truncated: runsOf(m, s.T),
    summary: runsOf(m, s.S),
    ackPermanent: runsOf(m, s.A0),
    spilled: perUnit(m, s.P),
    ackOnce: perUnit(m, s.A1),
    unspillable: perUnit(m, s.X),
    spillFailed: s.spillFailed,
    pending: s.pending,
    closedAt: s.closedAt,
  };
}

function engineView(s: SessionState) {
  return {
    known: s.policy !== null,
    lastSeq: s.lastSeq,
    seqs: rememberedIds(s).seqs,
    gapHead: s.gapHead,
    head: heads(s),
    verbatimStart: s.verbatimStart,
    pins: pairs(s.pins),
    truncated: pairs(s.truncated),
    summary: pairs(s.summary),
    ackPermanent: pairs(s.ackPermanent),
    spilled: enginePerUnit(s.spilled),
    ackOnce: enginePerUnit(s.ackOnce),
    unspillable: enginePerUnit(s.unspillable),
    spillFailed: s.spillFailed,
    pending: s.pendingSpill && { ...s.pendingSpill },
    closedAt: s.closedAt,
  };
}

function differential(events: readonly EngineInput[]): void {
  const model = new ReferenceSession(universeFor(events));
  let s: SessionState | undefined;
  events.forEach((e, i) => {
    const clock = 4_000_000 + i;
    const r = evolve(s, e, clock, OPTIONS);
    const expected = normalize(model.step(e, clock));
    const actual = normalize(r.outputs.map(fromEngine));
    expect({ i, event: e, outputs: actual }).toEqual({ i, event: e, outputs: expected });
    expect({ i, state: engineView(r.state) }).toEqual({ i, state: modelView(model) });
    s = r.state;
  });
}

describe('the engine agrees with an independent model of contract §4–§5', () => {
  it('on sessions opened first (every rule, every event kind, gaps and conflicts)', () => {
    fc.assert(fc.property(openedChaosStream, differential), { numRuns: 60 });
  });

  it('on any stream (unknown sessions, late or missing SessionOpened, dropped states)', () => {
    fc.assert(fc.property(chaosStream, differential), { numRuns: 40 });
  });

  it('on the ways out of a refusal: spills, spill failures, acknowledgements, commits', () => {
    fc.assert(fc.property(healingStream, differential), { numRuns: 80 });
  });

  it('on unknown sessions healing per unit', () => {
    fc.assert(fc.property(unknownHealingStream, differential), { numRuns: 40 });
  });

  it('on long sessions: stored verdicts, reused requestIds, the 16 and 32 windows', () => {
    fc.assert(fc.property(memoryStream, differential), { numRuns: 20 });
  });
});
