/**
 * Runs the engine (`evolve`) and the reference model (referenceModel.ts) side by side over one
 * session's events and compares, event by event:
 * - every output, field for field, in order (verdicts, spill requests, audit records), except
 *   the free-text messages and diagnostics, which are checked for what the contract fixes: they
 *   name the ranges as reported (§6), an UNAUTHORIZED_EVENT says which check failed (§4b), a
 *   STATE_COARSENED names the sets (§4a), a diagnostic is null exactly on APPROVE;
 * - the state: every set, head, seq memory, flag and stamp of §4 (rev 11 included).
 */
import { blindState, emptyState, heads } from '../../src/engine/state';
import { rememberedIds } from '../../src/engine/sequence';
import {
  ENGINE_VERSION,
  type EngineInput,
  type Output,
  type SessionState,
  type Unit,
  engineOptions,
  evolve,
} from '../../src/engine';
import { pairs } from './engineHarness';
import {
  type Bits,
  type ModelAudit,
  type ModelOutput,
  type ModelRange,
  ReferenceSession,
  universeFor,
} from './referenceModel';
import type { TestRing } from './testRing';

export interface DiffSetup {
  graceMs?: number;
  idleMs?: number;
  /** With a trusted key ring (§4b), or none. */
  ring?: TestRing | null;
  /** The session's state before the first event: none, or blind (unknown, F at 2^52 − 1). */
  start?: 'empty' | 'blind';
}

/** Audit codes whose message is about its ranges, so names each one (as reported, §6). */
const MESSAGE_NAMES_RANGES = new Set([
  'PINNED_EVICTED',
  'CONTENT_EVICTED',
  'SPILL_INCOMPLETE',
  'LOSS_ACKNOWLEDGED',
]);

const rangeText = (r: { start: number; end: number }) => `[${r.start},${r.end})`;

function namesEvery(text: string | null, ranges: readonly ModelRange[], what: string): void {
  for (const r of ranges) {
    if (!text?.includes(rangeText(r)))
      throw new Error(`${what} does not name ${r.unit} ${rangeText(r)}: ${text}`);
  }
}

/** An engine output in the model's shape, without its free text. */
function fromEngine(o: Output): ModelOutput {
  if (o.record === 'audit') {
    const { message: _m, ...a } = o.value;
    return { record: 'audit', value: { ...a, ranges: a.ranges.map((r) => ({ ...r })) } };
  }
  if (o.record === 'verdict') {
    const { diagnostic: _d, ...v } = o.value;
    return {
      record: 'verdict',
      value: { ...v, reasons: v.reasons.map(({ code, holes }) => ({ code, holes })) },
    };
  }
  const r = o.value;
  return {
    record: 'spill-request',
    value: { ...r, reasons: r.reasons.map(({ code, holes }) => ({ code, holes })) },
  };
}

/** The model's outputs without what only serves the message checks. */
function comparable(out: readonly ModelOutput[]): ModelOutput[] {
  return out.map((o) => {
    if (o.record !== 'audit') return o;
    const { failed: _f, sets: _s, ...a } = o.value;
    return { record: 'audit', value: a as ModelAudit };
  });
}

/** What the contract fixes about the free text, checked against the model's expectation. */
function checkTexts(actual: readonly Output[], expected: readonly ModelOutput[]): void {
  const verdict = actual.find((o) => o.record === 'verdict');
  actual.forEach((o, i) => {
    const m = expected[i]!;
    if (o.record === 'audit' && m.record === 'audit') {
      const a = o.value;
      if (m.value.failed && !a.message.includes(m.value.failed))
        throw new Error(
          `UNAUTHORIZED_EVENT message does not say "${m.value.failed}": ${a.message}`,
        );
      if (MESSAGE_NAMES_RANGES.has(a.code)) namesEvery(a.message, a.ranges, `${a.code} message`);
      for (const set of m.value.sets ?? [])
        if (!new RegExp(`\\b${set}\\b`).test(a.message))
          throw new Error(`STATE_COARSENED message does not name ${set}: ${a.message}`);
    }
    if (o.record === 'verdict') {
      const v = o.value;
      if ((v.diagnostic === null) !== (v.decision === 'APPROVE'))
        throw new Error(`diagnostic ${v.diagnostic} on ${v.decision}`);
      for (const r of v.reasons) {
        namesEvery(r.message, r.holes, `${r.code} reason`);
        namesEvery(v.diagnostic, r.holes, 'diagnostic');
      }
    }
    if (o.record === 'spill-request' && verdict?.record === 'verdict')
      expect(o.value.reasons).toEqual(verdict.value.reasons);
  });
}

type Runs = [number, number][];
const UNIT_ORDER: Unit[] = ['TURNS', 'TOKENS', 'MESSAGES'];

/** A per-unit set as [unit, runs] pairs in a fixed unit order, empty units left out. */
function perUnit(runsIn: (unit: Unit) => Runs): [Unit, Runs][] {
  return UNIT_ORDER.map((u): [Unit, Runs] => [u, runsIn(u)]).filter(([, r]) => r.length > 0);
}

const inUnits = (h: Record<Unit, number> | null) => h && UNIT_ORDER.map((u) => h[u]);

const pendingView = (p: { id: string; unit: Unit; start: number; end: number } | null) =>
  p && [p.id, p.unit, p.start, p.end];

export function modelView(m: ReferenceSession) {
  const s = m.s;
  const runs = (b: Bits | undefined) => (b ? m.u.runs(b) : []);
  return {
    known: s.policy !== null,
    lastSeq: s.lastSeq,
    seqs: [...s.ids.keys()].sort((a, b) => a - b),
    gapHead: s.Hg,
    head: inUnits(s.head),
    verbatimStart: s.V,
    pins: runs(s.pins),
    truncated: runs(s.T),
    summary: runs(s.S),
    ackPermanent: runs(s.A0),
    spilled: perUnit((u) => runs(s.P[u])),
    ackOnce: perUnit((u) => runs(s.A1[u])),
    unspillable: perUnit((u) => runs(s.X[u])),
    coarsened: perUnit((u) => runs(s.K[u])),
    spillFailed: s.spillFailed,
    pending: pendingView(s.pending),
    closedAt: s.closedAt,
    lastEventAt: s.lastEventAt,
    evidenceHead: inUnits(s.F),
    contested: s.contested,
  };
}

export function engineView(s: SessionState) {
  return {
    known: s.policy !== null,
    lastSeq: s.lastSeq,
    seqs: rememberedIds(s).seqs,
    gapHead: s.gapHead,
    head: inUnits(heads(s)),
    verbatimStart: s.verbatimStart,
    pins: pairs(s.pins),
    truncated: pairs(s.truncated),
    summary: pairs(s.summary),
    ackPermanent: pairs(s.ackPermanent),
    spilled: perUnit((u) => pairs(s.spilled[u])),
    ackOnce: perUnit((u) => pairs(s.ackOnce[u])),
    unspillable: perUnit((u) => pairs(s.unspillable[u])),
    coarsened: perUnit((u) => pairs(s.coarsened[u])),
    spillFailed: s.spillFailed,
    pending: pendingView(s.pendingSpill),
    closedAt: s.closedAt,
    lastEventAt: s.lastEventAt,
    evidenceHead: inUnits(s.evidenceHead),
    contested: s.contested,
  };
}

/**
 * Deep equality, cheaply: a canonical JSON comparison first (both sides are plain data), and
 * jest's diff only when they differ. (toEqual on every event of a 1,000-event stream with
 * 128-range sets costs seconds.)
 */
function sameOrExplain(actual: unknown, expected: unknown): void {
  if (canonical(actual) !== canonical(expected)) expect(actual).toEqual(expected);
}

function canonical(x: unknown): string {
  return JSON.stringify(x, (_k, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>)
            .filter(([, w]) => w !== undefined)
            .sort(([a], [b]) => (a < b ? -1 : 1)),
        )
      : v,
  );
}

/** The engine's options and the model for one setup. */
export function pair(events: readonly EngineInput[], setup: DiffSetup = {}) {
  const ring = setup.ring ?? null;
  const options = engineOptions({
    ...(setup.graceMs !== undefined ? { graceMs: setup.graceMs } : {}),
    ...(setup.idleMs !== undefined ? { idleMs: setup.idleMs } : {}),
    trustedKeys: ring?.engine ?? null,
  });
  const model = new ReferenceSession(
    universeFor(events, setup.start === 'blind'),
    {
      graceMs: options.graceMs,
      idleMs: options.idleMs,
      engineVersion: ENGINE_VERSION,
      ring: ring?.model ?? null,
    },
    setup.start ?? 'empty',
  );
  return { options, model };
}

/**
 * The differential check: throws (a jest expectation) at the first event where the engine and
 * the model differ. Returns the model's outputs, for statistics.
 */
export function differential(events: readonly EngineInput[], setup: DiffSetup = {}): ModelOutput[] {
  const { options, model } = pair(events, setup);
  let s: SessionState | undefined = setup.start === 'blind' ? blindState() : undefined;
  const all: ModelOutput[] = [];
  events.forEach((e, i) => {
    const clock = 4_000_000 + i;
    const r = evolve(s, e, clock, options);
    const expected = model.step(e, clock);
    const actual = r.outputs.map(fromEngine);
    sameOrExplain({ i, event: e, outputs: actual }, { i, event: e, outputs: comparable(expected) });
    checkTexts(r.outputs, expected);
    const [engineState, modelState] = [engineView(r.state ?? emptyState()), modelView(model)];
    // Both views list their fields in one order, so plain JSON compares them.
    if (JSON.stringify(engineState) !== JSON.stringify(modelState))
      expect({ i, state: engineState }).toEqual({ i, state: modelState });
    s = r.state;
    all.push(...expected);
  });
  return all;
}
