/**
 * Contract §8 (authority), as rev 12 states it, as a property of the engine: with a trusted key
 * ring, adding to a stream, anywhere, out-of-band records that fail the authority check
 * (unsigned, badly signed, by a foreign key, by a key without the role, expired; any ranges, any
 * occurredAt from 0 to 2^52 − 1; for the stream's session and for ids never seen) and byte
 * copies of the stream's own signed events
 * - never turns one of the stream's REFUSEs into an APPROVE (each request matched by its place
 *   in the stream, its requestId and its eventId),
 * - never drops a state (no inserted record causes a 'state-dropped', and every drop of the
 *   honest stream still happens, at the same event),
 * - never creates one (a session that has no state has none after an inserted record; a
 *   session id only inserted records name never has one).
 * The honest producer's signed events are valid only at their own occurredAt (the bound of
 * test/support/arbitraries.ts's insertionStream; docs/decisions.md 167): a copy the eventId
 * windows have forgotten (8 out-of-band eventIds; 32 seqs in band, or any drop, which keeps
 * only the out-of-band ones) is applied again while its signature is valid (§4b, "the expiry
 * bounds a replay"; an in-band one as a conflict, which a LossAcknowledged or SpillCompleted
 * survives), and can then approve what the stream refused.
 */
import fc from 'fast-check';
import {
  type EngineInput,
  type Note,
  type Output,
  type SessionState,
  type Verdict,
  engineOptions,
  evolve,
} from '../../src/engine';
import {
  type InsertionStream,
  SMALL_GRACE_MS,
  SMALL_IDLE_MS,
  insertionStream,
} from '../support/arbitraries';
import { testRing } from '../support/testRing';
import { headIn } from '../../src/engine/state';

const TOP = 4_503_599_627_370_495;

interface Step {
  event: EngineInput;
  outputs: readonly Output[];
  notes: readonly Note[];
  /** Whether the event's session had a state before and after the event. */
  before: boolean;
  after: boolean;
  /** The known head H′ in U before and after the event (null without a policy). */
  headBefore: number | null;
  headAfter: number | null;
}

/** H′ = max(H, Hg) in U, or null for a session with no state or no policy. */
function knownHeadOf(s: SessionState | undefined): number | null {
  if (!s?.unit) return null;
  return Math.max(headIn(s, s.unit), s.gapHead ?? 0);
}

/** The engine over a stream of several sessions, each session's state kept apart. */
function run(events: readonly EngineInput[], roles: InsertionStream['roles']): Step[] {
  const options = engineOptions({
    graceMs: SMALL_GRACE_MS,
    idleMs: SMALL_IDLE_MS,
    trustedKeys: testRing(roles).engine,
  });
  const states = new Map<string, SessionState | undefined>();
  return events.map((event, i) => {
    const prev = states.get(event.sessionId);
    const r = evolve(prev, event, 9_000_000 + i, options);
    const next = r.state as SessionState | undefined;
    states.set(event.sessionId, next);
    return {
      event,
      outputs: r.outputs,
      notes: r.notes,
      before: prev !== undefined,
      after: next !== undefined,
      headBefore: knownHeadOf(prev),
      headAfter: knownHeadOf(next),
    };
  });
}

const verdictIn = (st: Step): Verdict | undefined =>
  st.outputs.find((o) => o.record === 'verdict')?.value as Verdict | undefined;

const dropped = (st: Step) => st.notes.includes('state-dropped');

/** What the runs reached, so the property is not vacuous. */
const seen = new Map<string, number>();
const count = (k: string) => seen.set(k, (seen.get(k) ?? 0) + 1);

function kindOf(e: EngineInput, honest: readonly EngineInput[]): string {
  if (honest.includes(e)) return 'copy';
  if (e.occurredAt === 0) return 'junk at 0';
  if (e.occurredAt === TOP) return 'junk at 2^52 − 1';
  return 'junk';
}

function checkGuarantee({ roles, events, inserted }: InsertionStream): void {
  const honestEvents = events.filter((_, i) => !inserted[i]);
  const honest = run(honestEvents, roles);
  const mixed = run(events, roles);
  let k = 0;
  /** An inserted in-band copy took a seq the session had not, or raised H′: see below. */
  let beyondRev12 = false;
  mixed.forEach((m, i) => {
    if (inserted[i]) {
      const kind = kindOf(m.event, honestEvents);
      // Never drops a state, never creates one, never answers anything.
      expect({ i, kind, dropped: dropped(m) }).toEqual({ i, kind, dropped: false });
      if (!m.before)
        expect({ i, kind, createdState: m.after }).toEqual({ i, kind, createdState: false });
      expect(verdictIn(m)).toBeUndefined();
      if (m.before && m.event.sessionId === honestEvents[0]!.sessionId)
        count(`${kind}, live session`);
      if (!m.before) count(`${kind}, no state`);
      if (m.notes.includes('unauthorized')) count(`${kind}, unauthorized`);
      if (m.notes.includes('duplicate')) count(`${kind}, redelivery`);
      // Outside what §8 can promise as rev 12 words it: an in-band copy at a seq the session has
      // not taken (its sequence restarted after a drop, e.g. a session id used again, or was
      // re-based by an acknowledgement) takes that seq, as every in-band event that fails the
      // check does (§4b: "its seq is taken"), so it can fill a gap the honest stream reveals
      // (EVENT_GAP refuses there, not here) or make the next honest event advance the session.
      // The honest stream's comparison stops there (the inserted records' checks go on).
      if (m.event.seq !== null && !m.notes.includes('duplicate') && !m.notes.includes('conflict')) {
        beyondRev12 = true;
        count('copy took a seq');
      }
      // Likewise: an in-band copy in conflict is a gap (step 1), and step 2 raises Hg to the
      // end of its range, so H′ may rise past what the honest stream knows (its event named
      // positions of a session since dropped and opened again, or beyond the head then): later
      // spills and acknowledgements then place more (clipped to H′) and a request the honest
      // stream refused INVALID_REQUEST (beyond H′) can be approved.
      if (m.event.seq !== null && (m.headAfter ?? 0) > (m.headBefore ?? 0)) {
        beyondRev12 = true;
        count('copy raised H′');
      }
      return;
    }
    const h = honest[k++]!;
    if (beyondRev12) return;
    const where = {
      i,
      type: m.event.type,
      seq: m.event.seq,
      eventId: 'eventId' in m.event ? m.event.eventId : null,
    };
    // Every drop of the honest stream still happens, at the same event, and no other.
    if (dropped(h)) count('honest drop');
    expect({ ...where, dropped: dropped(m) }).toEqual({ ...where, dropped: dropped(h) });
    const hv = verdictIn(h);
    const mv = verdictIn(m);
    if (!hv) return;
    // Matched by place, requestId and the request's eventId (rev 12: requestEventId).
    expect({ ...where, answered: mv !== undefined }).toEqual({ ...where, answered: true });
    expect([mv!.requestId, mv!.requestEventId]).toEqual([hv.requestId, hv.requestEventId]);
    if (hv.decision === 'REFUSE') {
      count('honest REFUSE');
      expect({ ...where, requestId: hv.requestId, decision: mv!.decision }).toEqual({
        ...where,
        requestId: hv.requestId,
        decision: 'REFUSE',
      });
    }
  });
}

describe('§8 (rev 12): records without a key and byte copies of signed events, inserted anywhere', () => {
  it('never turn a REFUSE of the stream into an APPROVE, never drop a state and never create one', () => {
    fc.assert(fc.property(insertionStream, checkGuarantee), { numRuns: 150 });
    // Not vacuous: each kind of insertion reached live sessions and sessions without a state,
    // failed the authority check or was a redelivery, and honest refusals and drops were compared.
    for (const what of [
      'honest REFUSE',
      'honest drop',
      'junk, live session',
      'junk, no state',
      'junk, unauthorized',
      'junk at 0, live session',
      'junk at 2^52 − 1, live session',
      'junk at 2^52 − 1, no state',
      'copy, live session',
      'copy, redelivery',
      'copy, unauthorized',
    ])
      expect({ what, reached: (seen.get(what) ?? 0) > 0 }).toEqual({ what, reached: true });
  });
});
