/**
 * Contract §4a: coarsening a set past 128 ranges only ever makes decisions stricter. The engine
 * (bounded) runs beside the reference model with the bounds switched off (no coarsening, no K,
 * exact hole lists), both without a key ring (§4b plays no part here). At every request and
 * after the last event:
 * - the engine's sets differ from the unbounded ones only in the fail-closed direction (pins and
 *   T larger; S, P, A0 and A1 smaller) and only at positions of its coarsened set K, which is
 *   what keeps every later write-off exact;
 * - every rule the unbounded model fires on a request, the engine fires too (the first 15
 *   reported holes, the ones §6 reports exactly, covering the unbounded ones), so every request
 *   the unbounded model refuses, the engine refuses.
 * (That the engine is the bounded model is the differential test's business,
 * engine.reference.property.test.ts.)
 */
import fc from 'fast-check';
import {
  ENGINE_VERSION,
  type EngineInput,
  type SessionState,
  type Unit,
  type Verdict,
  engineOptions,
  evolve,
} from '../../src/engine';
import { UNITS, pairs } from '../support/engineHarness';
import { buildFragmenting, fragmentingPlan } from '../support/fragmentingStream';
import {
  type Bits,
  type ModelVerdict,
  ReferenceSession,
  type Universe,
  universeFor,
} from '../support/referenceModel';

/** A set that may be larger in the engine (more positions never approve more), or smaller. */
type Direction = 'larger' | 'smaller';

function checkSets(s: SessionState, m: ReferenceSession, i: number): void {
  const u = m.u;
  const bits = (set: readonly number[] | undefined) => u.fromRuns(pairs(set));
  const unitOf = (unit: Unit | null, fallback: Unit) => unit ?? fallback;
  const check = (name: string, unit: Unit, engine: Bits, loose: Bits, dir: Direction) => {
    const K = bits(s.coarsened[unit]);
    const [more, less] = dir === 'larger' ? [engine, loose] : [loose, engine];
    const wrongWay = u.minus(less, more);
    const outsideK = u.minus(u.minus(more, less), K);
    if (u.isEmpty(wrongWay) && u.isEmpty(outsideK)) return; // (expect per check is slow)
    expect({ i, set: name, unit, wrongWay: u.runs(wrongWay), outsideK: u.runs(outsideK) }).toEqual({
      i,
      set: name,
      unit,
      wrongWay: [],
      outsideK: [],
    });
  };
  const U = unitOf(s.unit, 'TURNS');
  check('pins', U, bits(s.pins), m.s.pins, 'larger');
  check('T', U, bits(s.truncated), m.s.T, 'larger');
  check('S', U, bits(s.summary), m.s.S, 'smaller');
  check('A0', U, bits(s.ackPermanent), m.s.A0, 'smaller');
  for (const unit of UNITS) {
    const none = u.empty();
    check('P', unit, bits(s.spilled[unit]), m.s.P[unit] ?? none, 'smaller');
    check('A1', unit, bits(s.ackOnce[unit]), m.s.A1[unit] ?? none, 'smaller');
  }
}

/** Holes the unbounded model names that the engine's exact (first 15) reported holes miss. */
function checkVerdict(engine: Verdict, loose: ModelVerdict, u: Universe, i: number): void {
  const where = { i, request: loose.requestId };
  if (loose.decision === 'REFUSE' && engine.decision !== 'REFUSE')
    expect({ ...where, d: engine.decision }).toEqual({ ...where, d: 'REFUSE' });
  for (const reason of loose.reasons) {
    const fired = engine.reasons.find((r) => r.code === reason.code);
    if (!fired)
      expect({ ...where, code: reason.code, fired: false }).toEqual({
        ...where,
        code: reason.code,
        fired: true,
      });
    // §6 reports a 16th range that may span positions between: only a list of at most 16
    // ranges is exact, so compare position by position only then.
    if (fired!.holes.length >= 16) continue;
    const covered = u.fromRuns(fired!.holes.map((h) => [h.start, h.end]));
    const missed = u.runs(u.minus(u.fromRuns(reason.holes.map((h) => [h.start, h.end])), covered));
    if (missed.length > 0)
      expect({ ...where, code: reason.code, missed }).toEqual({
        ...where,
        code: reason.code,
        missed: [],
      });
  }
}

/** Runs the engine and the unbounded model side by side; returns how often the engine coarsened. */
function neverLooser(events: readonly EngineInput[]): number {
  const options = engineOptions();
  const model = new ReferenceSession(universeFor(events), {
    engineVersion: ENGINE_VERSION,
    bounded: false,
  });
  let s: SessionState | undefined;
  let coarsened = 0;
  events.forEach((e, i) => {
    const r = evolve(s, e, 6_000_000 + i, options);
    s = r.state;
    const loose = model.step(e, 6_000_000 + i);
    const verdict = r.outputs.find((o) => o.record === 'verdict');
    const looseVerdict = loose.find((o) => o.record === 'verdict');
    if (verdict?.record !== looseVerdict?.record)
      expect(verdict?.record).toBe(looseVerdict?.record);
    if (verdict?.record === 'verdict' && looseVerdict?.record === 'verdict')
      checkVerdict(verdict.value, looseVerdict.value, model.u, i);
    const coarsening = r.outputs.some(
      (o) => o.record === 'audit' && o.value.code === 'STATE_COARSENED',
    );
    if (coarsening) coarsened++;
    // The sets where a request reads them, and at the end (every event would cost seconds).
    if (verdict || i === events.length - 1) checkSets(s!, model, i);
  });
  return coarsened;
}

describe('bounded range sets (contract §4a) never approve more', () => {
  it('the engine differs from an unbounded model only fail-closed and only in K, and refuses all it refuses, on sets fragmented past 128 ranges', () => {
    let coarsened = 0;
    fc.assert(
      fc.property(fragmentingPlan, (plan) => {
        coarsened += neverLooser(buildFragmenting(plan));
      }),
      { numRuns: 5 },
    );
    // Not vacuous: the sets did cross 128 ranges.
    expect(coarsened).toBeGreaterThan(0);
  });
});
