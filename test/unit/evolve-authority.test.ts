/**
 * Contract §4b: with a trusted key ring, a LossAcknowledged must be signed by a key with role
 * ACKNOWLEDGE, a SpillCompleted or SpillFailed by a key with role SPILL, over the canonical
 * payload, not expired. One that is not is a VIOLATION UNAUTHORIZED_EVENT and is not applied.
 * Floor TURNS span 2, turns of one token/message unless said otherwise.
 */
import type {
  ContextEvent,
  LossAcknowledged,
  SignableEvent,
  SpillCompleted,
  SpillFailed,
} from '../../src/engine';
import { canonicalPayload, decodeSignatureValue } from '../../src/engine/authority';
import { inUnit } from '../../src/engine/state';
import { SessionBuilder } from '../support/sessionBuilder';
import { auditsOf, play, policyIn, verdictOf } from '../support/engineHarness';
import { ringOf, signedBy, testKey } from '../support/keys';

const SID = 'sess';
const spiller = testKey('spill-service', ['SPILL']);
const operator = testKey('oncall', ['ACKNOWLEDGE']);
const stranger = testKey('stranger', ['ACKNOWLEDGE', 'SPILL']);
const RING = ringOf(spiller, operator);
const withRing = { trustedKeys: RING };

/** The seed's incident in small: turn 0 pinned, [0,3) truncated, a request refused with SPILL. */
function refusedSession(): SessionBuilder {
  const b = new SessionBuilder(SID).open(policyIn('TURNS', 2));
  b.turns(1, 1, ['CONSTRAINT']).turns(9, 1);
  b.truncate('TURNS', 0, 3);
  b.request('r', 'TURNS', 3, 8, 8);
  return b;
}

const sign = (key: typeof spiller, expiresAt?: number) => (e: ContextEvent) =>
  signedBy(e as SignableEvent, key, expiresAt);

function unauthorized(events: readonly ContextEvent[]) {
  return auditsOf(play(events, withRing).last.outputs).filter(
    (a) => a.code === 'UNAUTHORIZED_EVENT',
  );
}

describe('§4b without a ring: signatures are not looked at', () => {
  it('an unsigned out-of-band spill heals the refusal', () => {
    const b = refusedSession();
    b.outOfBand().spilled('r', 'TURNS', 0, 10);
    b.request('r2', 'TURNS', 3, 8, 8);
    const v = verdictOf(play(b.events).last);
    expect(v).toMatchObject({ decision: 'APPROVE', basis: 'LOSSLESS_SPILL' });
  });
});

describe('§4b with a ring: what is refused, and what happens then', () => {
  it.each([
    ['no signature', (e: ContextEvent) => e],
    ['unknown key', sign(stranger)],
    ['key without the role', sign(operator)],
  ])(
    'a spill with %s is UNAUTHORIZED_EVENT, changes no P, and the next request still refuses',
    (why, f) => {
      const b = refusedSession();
      const before = play(b.events, withRing).state;
      b.outOfBand().spilled('forged', 'TURNS', 0, 4_503_599_627_370_495).mapLast(f);
      const [violation, ...more] = unauthorized(b.events);
      expect(more).toEqual([]);
      expect(violation).toMatchObject({
        kind: 'VIOLATION',
        inputSeq: null,
        ranges: [{ unit: 'TURNS', start: 0, end: 4_503_599_627_370_495 }],
      });
      expect(violation!.message).toContain(why);
      const after = play(b.events, withRing).state;
      expect(after.spilled).toEqual(before.spilled);
      b.request('r2', 'TURNS', 3, 8, 8);
      expect(verdictOf(play(b.events, withRing).last)).toMatchObject({
        decision: 'REFUSE',
        action: 'SPILL',
      });
    },
  );

  it('a signed spill whose range was changed after signing is a bad signature', () => {
    const b = refusedSession();
    b.outOfBand().spilled('r', 'TURNS', 0, 4).mapLast(sign(spiller));
    b.mapLast((e) => ({ ...(e as SpillCompleted), range: { start: 0, end: 10 } }));
    expect(unauthorized(b.events)[0]!.message).toContain('bad signature');
  });

  it('a signature in non-canonical base64 (the padding bits set) is a bad signature', () => {
    const b = refusedSession();
    b.outOfBand().spilled('r', 'TURNS', 0, 10).mapLast(sign(spiller));
    const e = b.last as SpillCompleted;
    const value = e.signature!.value;
    // The 86th character carries 2 bits of the last byte and 4 padding bits: set one of those.
    const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const at = ALPHABET.indexOf(value[85]!);
    const loose = value.slice(0, 85) + ALPHABET[at | 1] + '==';
    expect(decodeSignatureValue(loose)).toBeNull();
    expect(Buffer.from(loose, 'base64')).toEqual(Buffer.from(value, 'base64'));
    b.mapLast(() => ({ ...e, signature: { ...e.signature!, value: loose } }));
    expect(unauthorized(b.events)[0]!.message).toContain('bad signature');
  });

  it('a signature that expired before the event occurred is expired', () => {
    const b = refusedSession();
    b.outOfBand().spilled('r', 'TURNS', 0, 10);
    b.mapLast((e) => signedBy(e as SpillCompleted, spiller, e.occurredAt - 1));
    expect(unauthorized(b.events)[0]!.message).toContain('expired');
  });

  it("a signature that expired before the session's lastEventAt is expired (a replay)", () => {
    const b = refusedSession();
    const at = b.last.occurredAt;
    // Occurred (and signed to expire) before the last event the session accepted.
    b.next({ outOfBand: true, occurredAt: at - 2 })
      .spilled('r', 'TURNS', 0, 10)
      .mapLast(sign(spiller, at - 1));
    expect(unauthorized(b.events)[0]!.message).toContain('expired');
  });

  it('a valid signed spill heals as an unsigned one does without a ring: APPROVE LOSSLESS_SPILL', () => {
    const b = refusedSession();
    b.outOfBand().spilled('r', 'TURNS', 0, 10).mapLast(sign(spiller));
    b.request('r2', 'TURNS', 3, 8, 8);
    const p = play(b.events, withRing);
    expect(auditsOf(p.outputs).map((a) => a.code)).not.toContain('UNAUTHORIZED_EVENT');
    expect(verdictOf(p.last)).toMatchObject({ decision: 'APPROVE', basis: 'LOSSLESS_SPILL' });
  });

  it('a valid signed acknowledgement heals as an unsigned one does without a ring: APPROVE LOSS_ACKNOWLEDGED', () => {
    const b = refusedSession();
    b.outOfBand().acknowledge('TURNS', 0, 3).mapLast(sign(operator));
    b.request('r2', 'TURNS', 3, 8, 8);
    expect(verdictOf(play(b.events, withRing).last)).toMatchObject({
      decision: 'APPROVE',
      basis: 'LOSS_ACKNOWLEDGED',
    });
  });

  it('an unsigned acknowledgement writes nothing off (no A0, no A1) and emits no LOSS_ACKNOWLEDGED', () => {
    const b = refusedSession();
    b.outOfBand().acknowledge('TURNS', 0, 10);
    const p = play(b.events, withRing);
    expect(auditsOf(p.last.outputs).map((a) => a.code)).toEqual(['UNAUTHORIZED_EVENT']);
    expect(p.state.ackPermanent).toEqual([]);
    expect(inUnit(p.state.ackOnce, 'TURNS')).toEqual([]);
  });

  it('an unsigned SpillFailed for the pending id leaves the pending request (no forced HALT)', () => {
    const b = refusedSession();
    const pending = play(b.events, withRing).state.pendingSpill;
    expect(pending).not.toBeNull();
    b.outOfBand().spillFailed(pending!.id);
    const p = play(b.events, withRing);
    expect(auditsOf(p.last.outputs)[0]).toMatchObject({ code: 'UNAUTHORIZED_EVENT', ranges: [] });
    expect(p.state.spillFailed).toBe(false);
    expect(p.state.pendingSpill).toEqual(pending);
  });

  it('a ring with keys of one role still requires signatures on all three types', () => {
    const b = refusedSession();
    b.outOfBand().spilled('r', 'TURNS', 0, 10);
    const p = play(b.events, { trustedKeys: ringOf(operator) });
    expect(auditsOf(p.last.outputs).map((a) => a.code)).toEqual(['UNAUTHORIZED_EVENT']);
  });
});

describe('§4b: where an unauthorized event still counts', () => {
  it('in band: its seq is taken and its eventId remembered (a redelivery is a duplicate)', () => {
    const b = refusedSession();
    b.acknowledge('TURNS', 0, 10);
    const ack = b.last;
    b.turns(1, 1);
    const p = play([...b.events, ack], withRing);
    expect(p.steps[p.steps.length - 2]!.notes).toEqual([]); // the next turn: no gap
    expect(p.last.notes).toEqual(['duplicate']);
  });

  it('in band covering the gap: no re-base, Hg stays', () => {
    const b = refusedSession().skipSeq(2);
    b.turns(1, 1);
    b.acknowledge('TURNS', 0, 20);
    const p = play(b.events, withRing);
    expect(p.state.gapHead).not.toBeNull();
  });

  it('out of band: step 0 is undone, so unsigned junk cannot push a signed event out of the window', () => {
    const b = refusedSession();
    b.outOfBand().spilled('r', 'TURNS', 0, 10).mapLast(sign(spiller));
    const signedSpill = b.last;
    for (let i = 0; i < 9; i++) b.outOfBand().spillFailed(`junk-${i}`);
    const p = play([...b.events, signedSpill], withRing);
    expect(p.last.notes).toEqual(['duplicate']);
  });

  it('out of band: its eventId is not remembered, so the same id signed later is applied', () => {
    const b = refusedSession();
    b.next({ outOfBand: true, eventId: 'spill-1' }).spilled('r', 'TURNS', 0, 10);
    const unsigned = b.last as SpillCompleted;
    const p = play([...b.events, signedBy(unsigned, spiller)], withRing);
    expect(p.last.notes).toEqual([]);
    expect(inUnit(p.state.spilled, 'TURNS')).toEqual([0, 10]);
  });

  it('it does not set lastEventAt (a far-future unsigned event cannot make signatures expire)', () => {
    const b = refusedSession();
    const before = play(b.events, withRing).state.lastEventAt;
    b.outOfBand().spilled('r', 'TURNS', 0, 10);
    b.mapLast((e) => ({ ...e, occurredAt: 9_000_000_000_000 }));
    expect(play(b.events, withRing).state.lastEventAt).toBe(before);
  });

  it('it counts as accepted for the repeated-requestId rule: the request is decided afresh', () => {
    const b = refusedSession();
    b.outOfBand().spilled('r', 'TURNS', 0, 10);
    b.request('r', 'TURNS', 3, 8, 8);
    expect(play(b.events, withRing).last.notes).not.toContain('stored-verdict');
  });

  it('an in-band SpillFailed in conflict is not checked (it never reaches step 3)', () => {
    const b = refusedSession();
    b.next({ seq: 3, eventId: 'another' }).spillFailed('x');
    const codes = auditsOf(play(b.events, withRing).last.outputs).map((a) => a.code);
    expect(codes).toEqual(['SEQ_CONFLICT']);
  });

  it('a SpillCompleted in the wrong unit is checked before anything else step 3 does', () => {
    const b = refusedSession();
    b.outOfBand().spilled('r', 'TOKENS', 0, 10);
    const codes = auditsOf(play(b.events, withRing).last.outputs).map((a) => a.code);
    expect(codes).toEqual(['UNAUTHORIZED_EVENT']);
  });
});

describe('§4b canonical payload', () => {
  const base = { sessionId: 's "1"', seq: null, eventId: 'e\n1', occurredAt: 5, signature: null };
  it('LossAcknowledged, SpillCompleted and SpillFailed: the exact field order, escapes and null seq', () => {
    const ack: LossAcknowledged = {
      ...base,
      type: 'LossAcknowledged',
      unit: 'TURNS',
      range: { start: 0, end: 8 },
      by: 'me\u0001',
      reason: 'ok é',
    };
    expect(canonicalPayload(ack, 'k', 9)).toBe(
      '["compaction-guard/1","LossAcknowledged","s \\"1\\"",null,"e\\n1",5,"k",9,"TURNS",0,8,"me\\u0001","ok é"]',
    );
    const spill: SpillCompleted = {
      ...base,
      seq: 3,
      type: 'SpillCompleted',
      spillRequestId: 'id',
      handle: 'file:///x',
      unit: 'TOKENS',
      range: { start: 1, end: 4_503_599_627_370_495 },
    };
    expect(canonicalPayload(spill, 'k', 9)).toBe(
      '["compaction-guard/1","SpillCompleted","s \\"1\\"",3,"e\\n1",5,"k",9,"id","file:///x","TOKENS",1,4503599627370495]',
    );
    const failed: SpillFailed = { ...base, type: 'SpillFailed', spillRequestId: 'id', error: '\\' };
    expect(canonicalPayload(failed, 'k', 9)).toBe(
      '["compaction-guard/1","SpillFailed","s \\"1\\"",null,"e\\n1",5,"k",9,"id","\\\\"]',
    );
  });

  it('a signed event cannot change band: the same spill signed out of band does not verify in band', () => {
    const b = refusedSession();
    b.outOfBand().spilled('r', 'TURNS', 0, 10).mapLast(sign(spiller));
    const moved = { ...(b.last as SpillCompleted), seq: b.nextSeq };
    b.events.pop();
    expect(unauthorized([...b.events, moved])[0]!.message).toContain('bad signature');
  });
});
