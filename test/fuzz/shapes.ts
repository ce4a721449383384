/**
 * fast-check generators of hostile input for the fuzz target: cases of records, as bytes, that
 * mostly follow a session's rules (so that the engine's deeper paths run) with hostile shapes
 * mixed in: deep nesting, huge strings and numbers, unpaired surrogates, repeated keys, invalid
 * UTF-8, broken Avro, keys that are not the sessionId, fragmenting runs of pinned turns,
 * truncations, spills and acknowledgements, many sessions, idle and grace periods passing, and
 * events signed by the ring's keys, by keys outside it, expired or tampered.
 */
import fc from 'fast-check';
import type { ContextEvent, Pin, Unit } from '../../src/engine/events';
import { eventUnionType, wrapEvent } from '../../src/schema/schemas';
import { signed } from '../../src/authority/signing';
import type { SignableEvent } from '../../src/engine/authority';
import { FUZZ_KEYS } from './keys';
import type { FuzzCase, FuzzRecord } from './pipeline';

const UNITS: readonly Unit[] = ['TURNS', 'TOKENS', 'MESSAGES'];
const PINS: readonly Pin[] = ['CONSTRAINT', 'PLAN', 'COMMITMENT', 'OPEN_TOOL_CALL'];
const T0 = 1_767_225_600_000;
const HOUR = 3_600_000;

// ---------------------------------------------------------------------------------------------
// Hostile values

/** Sizes around every bound of contract §3, and the 540 KB and 600 KB records. */
const STRING_SIZES = [0, 255, 256, 257, 1024, 1025, 4096, 4097, 70_000, 540_000, 600_000];
const NUMBERS = [
  0,
  -1,
  0.5,
  2 ** 31,
  2 ** 52 - 1,
  2 ** 52,
  9_007_199_254_740_990,
  2 ** 53,
  2 ** 63,
  1e308,
];
const DEPTHS = [31, 32, 33, 100, 5000];

export type HostileValue =
  | { k: 'string'; bytes: number; char: string }
  | { k: 'surrogate'; low: boolean }
  | { k: 'number'; n: number }
  | { k: 'deep'; depth: number; arrays: boolean }
  | { k: 'pins'; n: number }
  | { k: 'other'; v: null | boolean | string | [] | Record<string, never> };

const hostileValue: fc.Arbitrary<HostileValue> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant('string' as const),
      // Small sizes far more often: a 600 KB string makes a slow case.
      bytes: fc.oneof(
        { weight: 8, arbitrary: fc.constantFrom(...STRING_SIZES.filter((n) => n <= 4097)) },
        { weight: 1, arbitrary: fc.constantFrom(...STRING_SIZES.filter((n) => n > 4097)) },
      ),
      char: fc.constantFrom('a', 'é', '€', '😀', '\u0000', '"'),
    }),
  },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('surrogate' as const), low: fc.boolean() }) },
  {
    weight: 4,
    arbitrary: fc.record({ k: fc.constant('number' as const), n: fc.constantFrom(...NUMBERS) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant('deep' as const),
      depth: fc.constantFrom(...DEPTHS),
      arrays: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ k: fc.constant('pins' as const), n: fc.constantFrom(16, 17, 1000) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant('other' as const),
      v: fc.constantFrom(null, true, '12', [] as [], {} as Record<string, never>),
    }),
  },
);

function text(bytes: number, char: string): string {
  const each = Buffer.byteLength(char);
  return char.repeat(Math.max(0, Math.floor(bytes / each))) + 'x'.repeat(bytes % each);
}

function deep(depth: number, arrays: boolean): unknown {
  let v: unknown = 0;
  for (let i = 1; i < depth; i++) v = arrays ? [v] : { d: v };
  return v;
}

export function materialize(h: HostileValue): unknown {
  switch (h.k) {
    case 'string':
      return text(h.bytes, h.char);
    case 'surrogate':
      return h.low ? 'id-\uDC00' : 'id-\uD800-x';
    case 'number':
      return h.n;
    case 'deep':
      return deep(h.depth, h.arrays);
    case 'pins':
      return Array.from({ length: h.n }, (_, i) => PINS[i % PINS.length]);
    case 'other':
      return h.v;
  }
}

// ---------------------------------------------------------------------------------------------
// Mutations of one event, of its JSON text, of its bytes

/** A field of the event (by index into its leaf paths, or a new one) set to a hostile value. */
type FieldMutation =
  | { k: 'set'; path: number; value: HostileValue }
  | { k: 'add'; name: string; value: HostileValue }
  | { k: 'remove'; path: number };

const fieldMutation: fc.Arbitrary<FieldMutation> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ k: fc.constant('set' as const), path: fc.nat(), value: hostileValue }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant('add' as const),
      name: fc.constantFrom('extra', 'toString', '__proto__', 'constructor', 'seq2'),
      value: hostileValue,
    }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('remove' as const), path: fc.nat() }) },
);

/** Changes to the JSON text after it is written. */
type TextMutation =
  | { k: 'duplicateKey'; path: number }
  | { k: 'bom' }
  | { k: 'wrap'; depth: number }
  | { k: 'deepField'; depth: number }
  | { k: 'escapedSurrogate' }
  | { k: 'numberLiteral'; path: number; literal: string };

const textMutation: fc.Arbitrary<TextMutation> = fc.oneof(
  fc.record({ k: fc.constant('duplicateKey' as const), path: fc.nat() }),
  fc.record({ k: fc.constant('bom' as const) }),
  fc.record({ k: fc.constant('wrap' as const), depth: fc.constantFrom(...DEPTHS) }),
  fc.record({ k: fc.constant('deepField' as const), depth: fc.constantFrom(...DEPTHS) }),
  fc.record({ k: fc.constant('escapedSurrogate' as const) }),
  fc.record({
    k: fc.constant('numberLiteral' as const),
    path: fc.nat(),
    literal: fc.constantFrom(
      '1e400',
      '-0',
      '1.0',
      '4503599627370496',
      '9007199254740993',
      '123456789012345678901234567890',
      '0.0000001',
    ),
  }),
);

/** Changes to the bytes of the record's value. */
type ByteMutation =
  | { k: 'flip'; at: number; byte: number }
  | { k: 'cut'; at: number }
  | { k: 'insert'; at: number; bytes: readonly number[] }
  | { k: 'bigVarint'; n: bigint };

const byteMutation: fc.Arbitrary<ByteMutation> = fc.oneof(
  fc.record({ k: fc.constant('flip' as const), at: fc.nat(), byte: fc.nat({ max: 255 }) }),
  fc.record({ k: fc.constant('cut' as const), at: fc.nat() }),
  fc.record({
    k: fc.constant('insert' as const),
    at: fc.nat(),
    bytes: fc.constantFrom(
      [0xff],
      [0xc0, 0x80],
      [0xed, 0xa0, 0x80],
      [0xf4, 0x90, 0x80, 0x80],
      [0x80],
    ),
  }),
  fc.record({
    k: fc.constant('bigVarint' as const),
    n: fc.constantFrom(2n ** 52n, 9_007_199_254_740_990n, 2n ** 62n, -(2n ** 62n), -1n),
  }),
);

/** Where the record's key comes from. */
type KeyMode = 'session' | 'null' | 'other' | 'huge' | 'notUtf8';
const keyMode: fc.Arbitrary<KeyMode> = fc.oneof(
  { weight: 30, arbitrary: fc.constant('session' as const) },
  { weight: 1, arbitrary: fc.constantFrom<KeyMode>('null', 'other', 'huge', 'notUtf8') },
);

/** How a signable event is signed when the case has a ring (or even when it has none). */
type Signer = 'right' | 'none' | 'wrongRole' | 'stranger' | 'expired' | 'tampered' | 'garbage';
const signer: fc.Arbitrary<Signer> = fc.oneof(
  { weight: 8, arbitrary: fc.constant('right' as const) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Signer>(
      'none',
      'wrongRole',
      'stranger',
      'expired',
      'tampered',
      'garbage',
    ),
  },
);

/** The mutations of one record: most records are left alone. */
interface Dressing {
  field: FieldMutation | null;
  text: TextMutation | null;
  bytes: ByteMutation | null;
  key: KeyMode;
  avro: boolean;
  signer: Signer;
  /** Another unit for an event that names one (UNIT_MISMATCH, per-unit sets of unknown sessions). */
  unit: Unit | null;
}

const dressing: fc.Arbitrary<Dressing> = fc.record({
  field: fc.option(fieldMutation, { freq: 6 }),
  text: fc.option(textMutation, { freq: 12 }),
  bytes: fc.option(byteMutation, { freq: 12 }),
  key: keyMode,
  avro: fc.boolean(),
  signer,
  unit: fc.option(fc.constantFrom(...UNITS), { freq: 6 }),
});

const plain: Dressing = {
  field: null,
  text: null,
  bytes: null,
  key: 'session',
  avro: false,
  signer: 'right',
  unit: null,
};

// ---------------------------------------------------------------------------------------------
// Commands: what to do on which session

type Cmd =
  | { k: 'open'; unit: Unit; truncator: Unit; span: number; strict: boolean; spill: boolean }
  | { k: 'turn'; pinned: boolean; size: number }
  | { k: 'truncate'; at: number; len: number }
  | { k: 'request'; t: number; reuse: boolean }
  | { k: 'commit'; t: number }
  | { k: 'spill'; at: number; len: number; oob: boolean; echo: boolean }
  | { k: 'spillFailed'; oob: boolean; echo: boolean }
  | { k: 'ack'; at: number; len: number; oob: boolean }
  | { k: 'close' }
  | { k: 'wait'; ms: number }
  | { k: 'skip' }
  | { k: 'redeliver'; back: number }
  // Bursts: fragmenting runs and many sessions.
  | { k: 'pinRun'; n: number }
  | { k: 'truncRun'; n: number }
  | { k: 'spillRun'; n: number }
  | { k: 'ackRun'; n: number }
  | { k: 'requests'; n: number }
  | { k: 'junk'; n: number };

const small = fc.nat({ max: 40 });

const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant('open' as const),
      unit: fc.constantFrom(...UNITS),
      // Mostly the floor's unit; another one is UNIT_MISMATCH's case.
      truncator: fc.constantFrom<Unit>('TURNS', 'TURNS', 'TURNS', 'TOKENS', 'MESSAGES'),
      span: fc.integer({ min: 1, max: 12 }),
      strict: fc.boolean(),
      spill: fc.boolean(),
    }),
  },
  {
    weight: 10,
    arbitrary: fc.record({
      k: fc.constant('turn' as const),
      pinned: fc.boolean(),
      size: fc.integer({ min: 1, max: 20 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      k: fc.constant('truncate' as const),
      at: small,
      len: fc.nat({ max: 6 }),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({ k: fc.constant('request' as const), t: small, reuse: fc.boolean() }),
  },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('commit' as const), t: small }) },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant('spill' as const),
      at: small,
      len: fc.nat({ max: 8 }),
      oob: fc.boolean(),
      echo: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant('spillFailed' as const),
      oob: fc.boolean(),
      echo: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant('ack' as const),
      at: small,
      len: fc.nat({ max: 8 }),
      oob: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ k: 'close' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant('wait' as const),
      ms: fc.constantFrom(HOUR + 1, 31 * 24 * HOUR, 2 ** 40),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ k: 'skip' as const }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('redeliver' as const), back: small }) },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constantFrom(
        'pinRun' as const,
        'truncRun' as const,
        'spillRun' as const,
        'ackRun' as const,
      ),
      n: fc.integer({ min: 100, max: 400 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant('requests' as const),
      n: fc.integer({ min: 1, max: 20 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ k: fc.constant('junk' as const), n: fc.integer({ min: 10, max: 300 }) }),
  },
);

interface Step {
  session: number;
  cmd: Cmd;
  dress: Dressing;
}

const step: fc.Arbitrary<Step> = fc.record({
  session: fc.nat({ max: 3 }),
  cmd,
  dress: fc.oneof({ weight: 3, arbitrary: fc.constant(plain) }, { weight: 2, arbitrary: dressing }),
});

// ---------------------------------------------------------------------------------------------
// The interpreter: commands into events, events into bytes

interface Session {
  id: string;
  seq: number;
  oob: number;
  unit: Unit;
  turns: number;
  tokens: number;
  messages: number;
  requests: { id: string; seq: number; t: number }[];
  sent: ContextEvent[];
}

class CaseBuilder {
  readonly records: FuzzRecord[] = [];
  private readonly sessions: Session[];
  private time = T0;
  private junk = 0;

  constructor(private readonly ring: boolean) {
    this.sessions = [0, 1, 2, 3].map((i) => ({
      id: `s${i}`,
      seq: 0,
      oob: 0,
      unit: 'TURNS' as Unit,
      turns: 0,
      tokens: 0,
      messages: 0,
      requests: [],
      sent: [],
    }));
  }

  private head(s: Session, u: Unit = s.unit): number {
    return u === 'TURNS' ? s.turns : u === 'TOKENS' ? s.tokens : s.messages;
  }

  private envelope(s: Session) {
    this.time += 1000;
    const seq = s.seq++;
    return { sessionId: s.id, seq, eventId: `${s.id}-e${seq}`, occurredAt: this.time };
  }

  /** Out of band (seq null) when `oob`: only the three signable events may be. */
  private maybeOutOfBand(s: Session, oob: boolean) {
    if (!oob) return this.envelope(s);
    this.time += 1000;
    return { sessionId: s.id, seq: null, eventId: `${s.id}-o${s.oob++}`, occurredAt: this.time };
  }

  private emit(s: Session, event: ContextEvent, d: Dressing): void {
    const e = d.unit !== null && 'unit' in event ? { ...event, unit: d.unit } : event;
    s.sent.push(e);
    this.records.push(recordOf(this.signedIfSignable(e, d.signer), d, s.id));
  }

  private signedIfSignable(e: ContextEvent, how: Signer): ContextEvent {
    if (e.type !== 'SpillCompleted' && e.type !== 'SpillFailed' && e.type !== 'LossAcknowledged')
      return e;
    if (!this.ring && how === 'right') return e;
    return signAs(e, how);
  }

  apply({ session, cmd: c, dress: d }: Step): void {
    const s = this.sessions[session]!;
    const u = s.unit;
    switch (c.k) {
      case 'open':
        s.unit = c.unit;
        this.emit(
          s,
          {
            type: 'SessionOpened',
            ...this.envelope(s),
            policy: {
              windowTokens: 200_000,
              triggerTokens: 160_000,
              ceilingTokens: 160_000,
              floor: { unit: c.unit, span: c.span },
              truncatorUnit: c.truncator,
              coverage: c.strict ? 'STRICT' : 'PINNED',
              spill: c.spill ? 'ENABLED' : 'DISABLED',
            },
          },
          d,
        );
        break;
      case 'turn':
        this.turn(s, c.pinned, c.size, d);
        break;
      case 'truncate': {
        const lo = c.at % (this.head(s) + 3);
        this.emit(s, this.truncated(s, lo, lo + c.len), d);
        break;
      }
      case 'request': {
        const old = s.requests[c.t % Math.max(1, s.requests.length)];
        const id = c.reuse && old ? old.id : `r${s.seq}`;
        this.emit(s, this.request(s, id, c.t), d);
        break;
      }
      case 'commit': {
        const last = s.requests[s.requests.length - 1];
        // Half the commits echo the last request (an approval's commit), half are anything.
        const t = c.t % 2 === 0 && last ? last.t : c.t % (this.head(s) + 2);
        this.emit(
          s,
          {
            type: 'CompactionCommitted',
            ...this.envelope(s),
            requestId: last?.id ?? 'none',
            unit: u,
            summaryInput: { start: 0, end: t },
            tailStart: t,
          },
          d,
        );
        break;
      }
      case 'spill': {
        const lo = c.at % (this.head(s) + 3);
        this.emit(s, this.spilled(s, this.spillId(s, c.echo), lo, lo + c.len, c.oob), d);
        break;
      }
      case 'spillFailed':
        this.emit(
          s,
          {
            type: 'SpillFailed',
            ...this.maybeOutOfBand(s, c.oob),
            spillRequestId: this.spillId(s, c.echo),
            error: 'disk full',
            signature: null,
          },
          d,
        );
        break;
      case 'ack': {
        const lo = c.at % (this.head(s) + 3);
        this.emit(s, this.acknowledged(s, lo, lo + c.len, c.oob), d);
        break;
      }
      case 'close':
        this.emit(s, { type: 'SessionClosed', ...this.envelope(s) }, d);
        break;
      case 'wait':
        this.time += c.ms;
        break;
      case 'skip':
        s.seq++;
        break;
      case 'redeliver': {
        const old = s.sent[s.sent.length - 1 - (c.back % Math.max(1, s.sent.length))];
        if (old) this.records.push(recordOf(old, d, s.id));
        break;
      }
      case 'pinRun':
        for (let i = 0; i < c.n; i++) this.turn(s, i % 2 === 0, 1, plain);
        break;
      case 'truncRun':
        for (let i = 0; i < c.n; i++) this.emit(s, this.truncated(s, 2 * i, 2 * i + 1), plain);
        break;
      case 'spillRun':
        for (let i = 0; i < c.n; i++) {
          this.emit(s, this.spilled(s, this.spillId(s, true), 2 * i + 1, 2 * i + 2, true), {
            ...plain,
            signer: d.signer,
          });
        }
        break;
      case 'ackRun':
        for (let i = 0; i < c.n; i++) {
          this.emit(s, this.acknowledged(s, 2 * i, 2 * i + 1, true), {
            ...plain,
            signer: d.signer,
          });
        }
        break;
      case 'requests':
        for (let i = 0; i < c.n; i++) this.emit(s, this.request(s, `q${s.seq}`, i * 7), plain);
        break;
      case 'junk':
        for (let i = 0; i < c.n; i++) {
          const id = `junk-${this.junk++}`;
          const e: ContextEvent = {
            type: 'SpillFailed',
            sessionId: id,
            seq: null,
            eventId: `${id}-o`,
            occurredAt: (this.time += 1),
            spillRequestId: `${id}:r:0`,
            error: 'x',
            signature: null,
          };
          this.records.push(recordOf(this.signedIfSignable(e, d.signer), plain, id));
        }
        break;
    }
  }

  private turn(s: Session, pinned: boolean, size: number, d: Dressing): void {
    const e: ContextEvent = {
      type: 'TurnAppended',
      ...this.envelope(s),
      turn: s.turns,
      tokens: { start: s.tokens, end: s.tokens + size },
      messages: { start: s.messages, end: s.messages + 1 },
      role: pinned ? 'USER' : 'ASSISTANT',
      pins: pinned ? ['CONSTRAINT'] : [],
    };
    s.turns += 1;
    s.tokens += size;
    s.messages += 1;
    this.emit(s, e, d);
  }

  private truncated(s: Session, start: number, end: number): ContextEvent {
    return {
      type: 'Truncated',
      ...this.envelope(s),
      unit: s.unit,
      range: { start, end: Math.max(start, end) },
      reason: 'BUDGET_ENFORCEMENT',
    };
  }

  private request(s: Session, requestId: string, at: number): ContextEvent {
    const h = this.head(s);
    const t = at % (h + 2);
    s.requests.push({ id: requestId, seq: s.seq, t });
    return {
      type: 'CompactionRequested',
      ...this.envelope(s),
      requestId,
      unit: s.unit,
      summaryInput: { start: 0, end: t },
      tailStart: t,
      occupancyTokens: 170_000,
    };
  }

  private spillId(s: Session, echo: boolean): string {
    const r = s.requests[s.requests.length - 1];
    return echo && r ? `${s.id}:${r.id}:${r.seq}` : `${s.id}:none:0`;
  }

  private spilled(
    s: Session,
    spillRequestId: string,
    start: number,
    end: number,
    oob: boolean,
  ): ContextEvent {
    return {
      type: 'SpillCompleted',
      ...this.maybeOutOfBand(s, oob),
      spillRequestId,
      handle: 's3://bucket/spill',
      unit: s.unit,
      range: { start, end: Math.max(start, end) },
      signature: null,
    };
  }

  private acknowledged(s: Session, start: number, end: number, oob: boolean): ContextEvent {
    return {
      type: 'LossAcknowledged',
      ...this.maybeOutOfBand(s, oob),
      unit: s.unit,
      range: { start, end: Math.max(start, end) },
      by: 'operator',
      reason: 'accepted',
      signature: null,
    };
  }
}

function signAs(e: SignableEvent, how: Signer): SignableEvent {
  const key =
    how === 'wrongRole'
      ? FUZZ_KEYS.wrongRole
      : how === 'stranger'
        ? FUZZ_KEYS.stranger
        : e.type === 'LossAcknowledged'
          ? FUZZ_KEYS.acknowledge
          : FUZZ_KEYS.spill;
  switch (how) {
    case 'none':
      return { ...e, signature: null };
    case 'expired':
      return signed(e, key.signing, Math.max(0, e.occurredAt - 1));
    case 'garbage':
      return {
        ...e,
        signature: { keyId: key.signing.keyId, expiresAt: e.occurredAt, value: 'AAAA' },
      };
    case 'tampered': {
      const s = signed(e, key.signing, e.occurredAt + HOUR);
      const v = s.signature!.value;
      return {
        ...s,
        signature: { ...s.signature!, value: (v[0] === 'A' ? 'B' : 'A') + v.slice(1) },
      };
    }
    default:
      return signed(e, key.signing, e.occurredAt + HOUR);
  }
}

// ---------------------------------------------------------------------------------------------
// One event into one record's bytes

/** Every path to a leaf (or a non-empty container) of a plain JSON value. */
function leafPaths(v: unknown, prefix: string[] = [], out: string[][] = []): string[][] {
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>);
    if (prefix.length > 0) out.push(prefix);
    for (const [k, child] of entries) leafPaths(child, [...prefix, k], out);
  } else if (prefix.length > 0) {
    out.push(prefix);
  }
  return out;
}

function setAt(
  root: Record<string, unknown>,
  path: string[],
  value: unknown,
  remove = false,
): void {
  let o = root;
  for (const k of path.slice(0, -1)) {
    const next = o[k];
    if (next === null || typeof next !== 'object') return;
    o = next as Record<string, unknown>;
  }
  const last = path[path.length - 1]!;
  if (remove) delete o[last];
  else
    Object.defineProperty(o, last, { value, enumerable: true, writable: true, configurable: true });
}

function clone<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

function mutateFields(e: ContextEvent, m: FieldMutation): Record<string, unknown> {
  const o = clone(e) as unknown as Record<string, unknown>;
  const paths = leafPaths(o);
  switch (m.k) {
    case 'set':
      setAt(o, paths[m.path % paths.length]!, materialize(m.value));
      break;
    case 'add':
      setAt(o, [m.name], materialize(m.value));
      break;
    case 'remove':
      setAt(o, paths[m.path % paths.length]!, undefined, true);
      break;
  }
  return o;
}

function mutateText(json: string, m: TextMutation, value: Record<string, unknown>): string {
  switch (m.k) {
    case 'duplicateKey': {
      const keys = Object.keys(value);
      const k = keys[m.path % Math.max(1, keys.length)] ?? 'type';
      return `{${JSON.stringify(k)}:${JSON.stringify(value[k] ?? null)},${json.slice(1)}`;
    }
    case 'bom':
      return `\uFEFF${json}`;
    case 'wrap':
      return '['.repeat(m.depth) + json + ']'.repeat(m.depth);
    case 'deepField':
      return `{"deep":${'['.repeat(m.depth)}${']'.repeat(m.depth)},${json.slice(1)}`;
    case 'escapedSurrogate':
      return json.replace(/"sessionId":"/, '"sessionId":"\\ud800');
    case 'numberLiteral': {
      const numbers = [...json.matchAll(/:(-?\d+)/g)];
      const hit = numbers[m.path % Math.max(1, numbers.length)];
      if (!hit || hit.index === undefined) return json;
      return json.slice(0, hit.index + 1) + m.literal + json.slice(hit.index + hit[0].length);
    }
  }
}

/** A zigzag varint, as Avro writes a long. */
function varint(n: bigint): Buffer {
  let z = n >= 0n ? n << 1n : (-n << 1n) - 1n;
  const out: number[] = [];
  do {
    let b = Number(z & 0x7fn);
    z >>= 7n;
    if (z > 0n) b |= 0x80;
    out.push(b);
  } while (z > 0n);
  return Buffer.from(out);
}

/** A marker long in an event's Avro body, to be replaced by a varint no JS number can hold. */
const MARKER = 3_141_592_653;

function mutateBytes(b: Buffer, m: ByteMutation): Buffer {
  if (b.length === 0) return b;
  switch (m.k) {
    case 'flip': {
      const out = Buffer.from(b);
      out[m.at % b.length] = m.byte;
      return out;
    }
    case 'cut':
      return b.subarray(0, m.at % b.length);
    case 'insert': {
      const at = m.at % (b.length + 1);
      return Buffer.concat([b.subarray(0, at), Buffer.from(m.bytes), b.subarray(at)]);
    }
    case 'bigVarint': {
      const marker = varint(BigInt(MARKER));
      const at = b.indexOf(marker);
      if (at < 0) return b;
      return Buffer.concat([b.subarray(0, at), varint(m.n), b.subarray(at + marker.length)]);
    }
  }
}

function avroBytes(
  e: ContextEvent,
  value: Record<string, unknown>,
  m: ByteMutation | null,
): Buffer | null {
  let v = value;
  if (m?.k === 'bigVarint') {
    // The long to replace: the first integer field of the event (seq, or turn, or a position).
    const numeric = leafPaths(v).find(
      (p) =>
        typeof p.reduce<unknown>((o, k) => (o as Record<string, unknown>)?.[k], v) === 'number',
    );
    if (numeric) {
      v = clone(v);
      setAt(v, numeric, MARKER);
    }
  }
  try {
    return Buffer.concat([
      Buffer.from([0, 0, 0, 0, 1]),
      eventUnionType.toBuffer(wrapEvent({ ...v, type: e.type } as unknown as ContextEvent)),
    ]);
  } catch {
    return null; // not encodable as Avro (a hostile field): the record goes as JSON
  }
}

function keyBytes(mode: KeyMode, sessionId: string): Buffer | null {
  switch (mode) {
    case 'session':
      return Buffer.from(sessionId);
    case 'null':
      return null;
    case 'other':
      return Buffer.from(`${sessionId}-other`);
    case 'huge':
      return Buffer.from('k'.repeat(600_000));
    case 'notUtf8':
      return Buffer.from([0xff, 0xfe, 0x00]);
  }
}

function recordOf(e: ContextEvent, d: Dressing, sessionId: string): FuzzRecord {
  const value = d.field ? mutateFields(e, d.field) : (e as unknown as Record<string, unknown>);
  let bytes: Buffer | null = d.avro && d.text === null ? avroBytes(e, value, d.bytes) : null;
  if (bytes === null) {
    let json = JSON.stringify(value);
    if (d.text) json = mutateText(json, d.text, value);
    bytes = Buffer.from(json, 'utf8');
  }
  if (d.bytes && d.bytes.k !== 'bigVarint') bytes = mutateBytes(bytes, d.bytes);
  else if (d.bytes?.k === 'bigVarint' && bytes[0] === 0) bytes = mutateBytes(bytes, d.bytes);
  return { key: keyBytes(d.key, sessionId), value: bytes };
}

/** A case: which ring, then steps over up to four sessions (bursts add hundreds of records). */
const generatedCase: fc.Arbitrary<FuzzCase> = fc
  .record({ ring: fc.boolean(), steps: fc.array(step, { minLength: 1, maxLength: 40 }) })
  .map(({ ring, steps }) => {
    const b = new CaseBuilder(ring);
    for (const s of steps) b.apply(s);
    return { ring, records: b.records };
  });

/**
 * A corpus case with a few of its records' bytes changed, as a mutational fuzzer starts from its
 * seeds: the poison records and earlier findings are near the edges worth probing again.
 */
function mutatedCorpusCase(corpus: readonly FuzzCase[]): fc.Arbitrary<FuzzCase> {
  return fc
    .record({
      pick: fc.nat(),
      ring: fc.boolean(),
      changes: fc.array(fc.record({ at: fc.nat(), m: byteMutation }), {
        minLength: 1,
        maxLength: 4,
      }),
    })
    .map(({ pick, ring, changes }) => {
      const base = corpus[pick % corpus.length]!;
      const records = [...base.records];
      for (const { at, m } of changes) {
        const i = at % records.length;
        const r = records[i]!;
        records[i] = { key: r.key, value: r.value && mutateBytes(r.value, m) };
      }
      return { ring, records };
    });
}

/** Generated cases, and now and then a mutated corpus case. */
export function fuzzCases(corpus: readonly FuzzCase[]): fc.Arbitrary<FuzzCase> {
  if (corpus.length === 0) return generatedCase;
  return fc.oneof(
    { weight: 9, arbitrary: generatedCase },
    { weight: 1, arbitrary: mutatedCorpusCase(corpus) },
  );
}
