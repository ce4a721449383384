/**
 * Binary form of a session's state, for the changelog topic (and the state-size benchmark).
 * Avro (avsc) with a leading format-version byte; sorted position lists are delta-encoded so
 * they are small varints. Round-trips exactly: `deserialize(serialize(s))` deep-equals `withCanonicalRing(s)` (the
 * remembered eventIds come back in ascending order from slot 0, sequence.ts).
 */
import * as avro from 'avsc';
import type { Unit } from './events';
import type { IntervalSet } from './intervals';
import { type EvidenceHead, NO_IDS, NO_SETS, type PerUnit, type SessionState } from './state';
import { rememberedFrom, rememberedIds } from './sequence';

/**
 * The leading byte. Format 4 holds an unknown session's extent E beside what format 3
 * holds: lastEventAt, the evidence head F, the coarsened set K and the contested flag,
 * beside what format 2 holds, the out-of-band eventIds (§4 step 0), which format 1 lacks.
 * Records of formats 1 to 3, which older changelogs may hold, restore with the missing fields
 * at their defaults (none remembered; no lastEventAt, no F, K empty, not contested, no E: an
 * unknown session restored from them reaches only F, which fails closed; state-format.test.ts
 * and evolve-out-of-band.test.ts restore formats 2 and 1).
 */
const FORMAT_VERSION = 4;
const FORMAT_V3 = 3;
const FORMAT_V2 = 2;
const FORMAT_V1 = 1;
const UNITS = ['TURNS', 'TOKENS', 'MESSAGES'];
const unit = { type: 'enum', name: 'Unit', symbols: UNITS };
const deltas = { type: 'array', items: 'long' };
const perUnit = {
  type: 'array',
  items: {
    type: 'record',
    name: 'UnitSet',
    fields: [
      { name: 'unit', type: 'Unit' },
      { name: 'set', type: deltas },
    ],
  },
};

const stateFieldsV1 = [
  {
    name: 'policy',
    type: [
      'null',
      {
        type: 'record',
        name: 'Policy',
        fields: [
          { name: 'windowTokens', type: 'long' },
          { name: 'triggerTokens', type: 'long' },
          { name: 'ceilingTokens', type: 'long' },
          { name: 'floorUnit', type: unit },
          { name: 'floorSpan', type: 'long' },
          { name: 'truncatorUnit', type: 'Unit' },
          { name: 'pinnedOnly', type: 'boolean' },
          { name: 'spillDisabled', type: 'boolean' },
        ],
      },
    ],
  },
  { name: 'lastSeq', type: 'long' },
  { name: 'gapHead', type: ['null', 'long'] },
  { name: 'head', type: { type: 'array', items: 'long' } },
  { name: 'lastTurn', type: ['null', { type: 'array', items: 'long' }] },
  { name: 'verbatimStart', type: 'long' },
  { name: 'pins', type: deltas },
  { name: 'truncated', type: deltas },
  { name: 'summary', type: deltas },
  { name: 'ackPermanent', type: deltas },
  { name: 'spilled', type: perUnit },
  { name: 'ackOnce', type: { type: 'array', items: 'UnitSet' } },
  { name: 'unspillable', type: { type: 'array', items: 'UnitSet' } },
  { name: 'spillFailed', type: 'boolean' },
  {
    name: 'pendingSpill',
    type: [
      'null',
      {
        type: 'record',
        name: 'PendingSpill',
        fields: [
          { name: 'id', type: 'string' },
          { name: 'unit', type: 'Unit' },
          { name: 'start', type: 'long' },
          { name: 'end', type: 'long' },
        ],
      },
    ],
  },
  { name: 'recentSeqs', type: deltas },
  { name: 'recentIds', type: { type: 'array', items: 'long' } },
  {
    name: 'verdicts',
    type: {
      type: 'array',
      items: {
        type: 'record',
        name: 'StoredVerdict',
        fields: [
          { name: 'requestKey', type: 'long' },
          { name: 'unit', type: 'Unit' },
          { name: 'sIn', type: 'long' },
          { name: 'eIn', type: 'long' },
          { name: 'tailStart', type: 'long' },
          { name: 'approved', type: 'boolean' },
          { name: 'inputSeq', type: 'long' },
          { name: 'requestedAt', type: 'long' },
          { name: 'decidedAt', type: 'long' },
          { name: 'epoch', type: 'long' },
        ],
      },
    },
  },
  { name: 'epoch', type: 'long' },
  { name: 'closedAt', type: ['null', 'long'] },
];

const stateTypeV1 = avro.Type.forSchema({
  type: 'record',
  name: 'SessionStateV1',
  namespace: 'io.compactionguard.state',
  fields: stateFieldsV1,
} as unknown as avro.Schema);

const stateFieldsV2 = [
  ...stateFieldsV1,
  { name: 'outOfBandIds', type: { type: 'array', items: 'long' }, default: [] },
];

const stateTypeV2 = avro.Type.forSchema({
  type: 'record',
  name: 'SessionStateV2',
  aliases: ['SessionStateV1'],
  namespace: 'io.compactionguard.state',
  fields: stateFieldsV2,
} as unknown as avro.Schema);

const stateFieldsV3 = [
  ...stateFieldsV2,
  { name: 'lastEventAt', type: ['null', 'long'], default: null },
  /** F as [TURNS, TOKENS, MESSAGES], or null. */
  { name: 'evidenceHead', type: ['null', { type: 'array', items: 'long' }], default: null },
  { name: 'coarsened', type: { type: 'array', items: 'UnitSet' }, default: [] },
  { name: 'contested', type: 'boolean', default: false },
];

const stateTypeV3 = avro.Type.forSchema({
  type: 'record',
  name: 'SessionStateV3',
  aliases: ['SessionStateV1', 'SessionStateV2'],
  namespace: 'io.compactionguard.state',
  fields: stateFieldsV3,
} as unknown as avro.Schema);

const stateType = avro.Type.forSchema({
  type: 'record',
  name: 'SessionStateV4',
  aliases: ['SessionStateV1', 'SessionStateV2', 'SessionStateV3'],
  namespace: 'io.compactionguard.state',
  fields: [
    ...stateFieldsV3,
    /** E as [TURNS, TOKENS, MESSAGES], or null. */
    { name: 'extent', type: ['null', { type: 'array', items: 'long' }], default: null },
  ],
} as unknown as avro.Schema);

/** Reads older bodies as format 4 (the new fields take their defaults). */
const fromV1 = stateType.createResolver(stateTypeV1);
const fromV2 = stateType.createResolver(stateTypeV2);
const fromV3 = stateType.createResolver(stateTypeV3);

function toDeltas(a: readonly number[]): number[] {
  const out = new Array<number>(a.length);
  let prev = 0;
  for (let i = 0; i < a.length; i++) {
    out[i] = a[i]! - prev;
    prev = a[i]!;
  }
  return out;
}

function fromDeltas(d: readonly number[]): number[] {
  const out = new Array<number>(d.length);
  let acc = 0;
  for (let i = 0; i < d.length; i++) {
    acc += d[i]!;
    out[i] = acc;
  }
  return out;
}

function perUnitOut(sets: PerUnit): { unit: Unit; set: number[] }[] {
  const out: { unit: Unit; set: number[] }[] = [];
  for (const u of UNITS as Unit[]) {
    const set = sets[u];
    if (set !== undefined) out.push({ unit: u, set: toDeltas(set) });
  }
  return out;
}

function perUnitIn(list: { unit: Unit; set: number[] }[]): PerUnit {
  if (list.length === 0) return NO_SETS;
  const out: PerUnit = {};
  for (const x of list) out[x.unit] = fromDeltas(x.set) as IntervalSet;
  return out;
}

/** F or E as [TURNS, TOKENS, MESSAGES], or null. */
function unitTriple(h: EvidenceHead | null): number[] | null {
  return h === null ? null : [h.TURNS, h.TOKENS, h.MESSAGES];
}

function perUnitNumbers(t: number[] | null): EvidenceHead | null {
  return t === null ? null : { TURNS: t[0]!, TOKENS: t[1]!, MESSAGES: t[2]! };
}

export function serializeState(s: SessionState): Buffer {
  const p = s.policy;
  const remembered = rememberedIds(s);
  const body = stateType.toBuffer({
    policy: p && {
      windowTokens: p.windowTokens,
      triggerTokens: p.triggerTokens,
      ceilingTokens: p.ceilingTokens,
      floorUnit: p.floor.unit,
      floorSpan: p.floor.span,
      truncatorUnit: p.truncatorUnit,
      pinnedOnly: p.coverage === 'PINNED',
      spillDisabled: p.spill === 'DISABLED',
    },
    lastSeq: s.lastSeq,
    gapHead: s.gapHead,
    head: [s.headTurns, s.headTokens, s.headMessages],
    lastTurn:
      s.lastTurn < 0
        ? null
        : [s.lastTurn, s.lastTokensStart, s.lastTokensEnd, s.lastMessagesStart, s.lastMessagesEnd],
    verbatimStart: s.verbatimStart,
    pins: toDeltas(s.pins),
    truncated: toDeltas(s.truncated),
    summary: toDeltas(s.summary),
    ackPermanent: toDeltas(s.ackPermanent),
    spilled: perUnitOut(s.spilled),
    ackOnce: perUnitOut(s.ackOnce),
    unspillable: perUnitOut(s.unspillable),
    spillFailed: s.spillFailed,
    pendingSpill: s.pendingSpill,
    recentSeqs: toDeltas(remembered.seqs),
    recentIds: remembered.ids,
    verdicts: s.verdicts.map((v) => ({
      requestKey: v.requestKey,
      unit: v.unit,
      sIn: v.sIn,
      eIn: v.eIn,
      tailStart: v.tailStart,
      approved: v.decision === 'APPROVE',
      inputSeq: v.inputSeq,
      requestedAt: v.requestedAt,
      decidedAt: v.decidedAt,
      epoch: v.epoch,
    })),
    epoch: s.epoch,
    closedAt: s.closedAt,
    outOfBandIds: s.outOfBandIds,
    lastEventAt: s.lastEventAt,
    evidenceHead: unitTriple(s.evidenceHead),
    coarsened: perUnitOut(s.coarsened),
    contested: s.contested,
    extent: unitTriple(s.extent),
  });
  return Buffer.concat([Buffer.from([FORMAT_VERSION]), body]);
}

/* eslint-disable @typescript-eslint/no-explicit-any -- avsc decodes to untyped records */
export function deserializeState(buf: Buffer): SessionState {
  const format = buf.length === 0 ? null : buf[0];
  const resolver =
    format === FORMAT_VERSION
      ? undefined
      : format === FORMAT_V3
        ? fromV3
        : format === FORMAT_V2
          ? fromV2
          : format === FORMAT_V1
            ? fromV1
            : null;
  if (resolver === null) {
    throw new Error(`unsupported session state format ${format === null ? '(empty)' : format}`);
  }
  const body = buf.subarray(1);
  const r: any = stateType.fromBuffer(body, resolver);
  const p = r.policy;
  const [turns, tokens, messages] = r.head as number[];
  const lt = r.lastTurn as number[] | null;
  const policy: SessionState['policy'] = p && {
    windowTokens: p.windowTokens,
    triggerTokens: p.triggerTokens,
    ceilingTokens: p.ceilingTokens,
    floor: { unit: p.floorUnit, span: p.floorSpan },
    truncatorUnit: p.truncatorUnit,
    coverage: p.pinnedOnly ? 'PINNED' : 'STRICT',
    spill: p.spillDisabled ? 'DISABLED' : 'ENABLED',
  };
  return {
    unit: policy ? policy.floor.unit : null,
    closedAt: r.closedAt,
    lastSeq: r.lastSeq,
    lastTurn: lt ? lt[0]! : -1,
    lastTokensEnd: lt ? lt[2]! : 0,
    lastMessagesEnd: lt ? lt[4]! : 0,
    recent: rememberedFrom(fromDeltas(r.recentSeqs), r.recentIds),
    recentNext: 0,
    outOfBandIds: r.outOfBandIds.length === 0 ? NO_IDS : r.outOfBandIds,
    epoch: r.epoch,
    headTurns: turns!,
    headTokens: tokens!,
    headMessages: messages!,
    lastTokensStart: lt ? lt[1]! : 0,
    lastMessagesStart: lt ? lt[3]! : 0,
    gapHead: r.gapHead,
    policy,
    verbatimStart: r.verbatimStart,
    pins: fromDeltas(r.pins),
    truncated: fromDeltas(r.truncated),
    summary: fromDeltas(r.summary),
    ackPermanent: fromDeltas(r.ackPermanent),
    spilled: perUnitIn(r.spilled),
    ackOnce: perUnitIn(r.ackOnce),
    unspillable: perUnitIn(r.unspillable),
    spillFailed: r.spillFailed,
    pendingSpill: r.pendingSpill && { ...r.pendingSpill },
    verdicts: r.verdicts.map((v: any) => ({
      requestKey: v.requestKey,
      unit: v.unit,
      sIn: v.sIn,
      eIn: v.eIn,
      tailStart: v.tailStart,
      decision: v.approved ? 'APPROVE' : 'REFUSE',
      inputSeq: v.inputSeq,
      requestedAt: v.requestedAt,
      decidedAt: v.decidedAt,
      epoch: v.epoch,
    })),
    lastEventAt: r.lastEventAt,
    evidenceHead: perUnitNumbers(r.evidenceHead),
    extent: perUnitNumbers(r.extent),
    coarsened: perUnitIn(r.coarsened),
    contested: r.contested,
  };
}
