/**
 * Runs the engine (`evolve`) and the reference model (referenceModel.ts) side by side over one
 * session's events and compares, event by event:
 * - every output, field for field, in order (verdicts, spill requests, audit records), except
 *   the free-text messages and diagnostics, which are checked for what the contract fixes: they
 *   name the ranges as reported (§6), an UNAUTHORIZED_EVENT says which check failed (§4b), a
 *   STATE_COARSENED names the sets (§4a), a diagnostic is null exactly on APPROVE;
 * - the state: every set, head, seq memory, flag and stamp of §4 (rev 11 included).
 */
import { blindState, heads } from '../../src/engine/state';
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
  'APPROVAL_STALE_AT_COMMIT',
  'UNAUTHORIZED_EVENT',
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
        throw new Error(`UNAUTHORIZED_EVENT message does not say "${m.value.failed}": ${a.message}`);
      if (MESSAGE_NAMES_RANGES.has(a.code)) namesEvery(a.message, a.ranges, `${a.code} message`);
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

export function modelView(m: ReferenceSession) {
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
    coarsened: perUnit(m, s.K),
    spillFailed: s.spillFailed,
    pending: s.pending,
    closedAt: s.closedAt,
    lastEventAt: s.lastEventAt,
    evidenceHead: s.F,
    contested: s.contested,
  };
}

export function engineView(s: SessionState) {
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
    coarsened: enginePerUnit(s.coarsened),
    spillFailed: s.spillFailed,
    pending: s.pendingSpill && { ...s.pendingSpill },
    closedAt: s.closedAt,
    lastEventAt: s.lastEventAt,
    evidenceHead: s.evidenceHead && { ...s.evidenceHead },
    contested: s.contested,
  };
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
    expect({ i, event: e, outputs: actual }).toEqual({ i, event: e, outputs: comparable(expected) });
    checkTexts(r.outputs, expected);
    expect({ i, state: engineView(r.state) }).toEqual({ i, state: modelView(model) });
    s = r.state;
    all.push(...expected);
  });
  return all;
}
