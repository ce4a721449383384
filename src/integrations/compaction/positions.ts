/**
 * Where each message of one conversation's context stands for the guard: a turn of the session
 * (with its role, pins and original order), or the summary standing for `[0, V)`. Keyed as the
 * framework names messages (LangChain: the message id; the AI SDK: the message object).
 */
import type { Pin, Policy, Role, Span, Unit } from '../../engine/events';
import type { GuardedSession, TurnPosition } from '../../client/session';

interface TurnEntry {
  kind: 'turn';
  turn: number;
  role: Role;
  pins: readonly Pin[];
  /** The turn of the message it copies (its own turn when it is no copy). */
  origin: number;
}
type Entry = TurnEntry | { kind: 'summary' };

/** A copy to report after a committed summary: `key` copies the message `of`. */
export interface PutBack<K> {
  key: K;
  of: K;
  tokens: number;
}

export class ContextPositions<K> {
  private entries = new Map<K, Entry>();
  /** Copies put back by keepPinned, still in the context. */
  private block = new Set<K>();
  private verbatimStart = 0;
  private opened: boolean;
  readonly unit: Unit;

  constructor(
    readonly session: GuardedSession,
    private readonly policy: Policy,
    /** The pins whose messages keepPinned puts back (none: off). */
    private readonly kept: readonly Pin[],
  ) {
    this.unit = policy.floor.unit;
    this.opened = session.seq > 0;
  }

  /** SessionOpened with the policy, once, unless the session was open already (resumed). */
  async open(): Promise<void> {
    if (this.opened) return;
    await this.session.open(this.policy);
    this.opened = true;
  }

  has(k: K): boolean {
    return this.entries.has(k);
  }

  /** A followed message that became turn `turn`. */
  add(k: K, turn: number, role: Role, pins: readonly Pin[]): void {
    this.entries.set(k, { kind: 'turn', turn, role, pins, origin: turn });
  }

  /** Where a followed message stands, in the floor unit. */
  span(k: K): Span {
    const e = this.entry(k);
    if (e.kind === 'summary') return { start: 0, end: this.verbatimStart };
    return {
      start: this.session.startOf(e.turn, this.unit),
      end: this.session.startOf(e.turn + 1, this.unit),
    };
  }

  /**
   * The messages in position order: the summary first, then by turn. The model sees the copies
   * right after the summary, but they are newer turns; a summarizer and a tail taken in this
   * order are always a prefix and a suffix of the positions, as a request must name them.
   */
  inPositionOrder<M>(messages: readonly M[], key: (m: M) => K): M[] {
    const rank = (m: M) => {
      const e = this.entry(key(m));
      return e.kind === 'summary' ? -1 : e.turn;
    };
    return [...messages].sort((a, b) => rank(a) - rank(b));
  }

  /** The same message under another key (a framework that hands over equal copies). */
  rekey(from: K, to: K): void {
    if (from === to) return;
    this.entries.set(to, this.entry(from));
    this.entries.delete(from);
    if (this.block.delete(from)) this.block.add(to);
  }

  /** Whether keepPinned puts the message back when a summary replaces it. */
  pinned(k: K): boolean {
    const e = this.entries.get(k);
    return e?.kind === 'turn' && e.pins.some((p) => this.kept.includes(p));
  }

  inBlock(k: K): boolean {
    return this.block.has(k);
  }

  /** The original order of a message (a copy has its original's). */
  origin(k: K): number {
    const e = this.entry(k);
    return e.kind === 'turn' ? e.origin : -1;
  }

  /**
   * After a committed compaction: the summary stands for `[0, tailStart)`, the kept messages
   * keep their turns, and each copy is new context: a TurnAppended at the head with its
   * original's role and pins (contract §3: a turn entered the context), so positions and seq
   * stay right over any number of compactions. Returns the copies' positions, in order.
   */
  async compacted(
    summary: K,
    preserved: readonly K[],
    tailStart: number,
    copies: readonly PutBack<K>[],
  ): Promise<TurnPosition[]> {
    this.verbatimStart = Math.max(this.verbatimStart, tailStart);
    const originals = copies.map((c) => ({ ...c, entry: this.entry(c.of) as TurnEntry }));
    const kept = preserved.map((k) => [k, this.entry(k)] as const);
    this.entries = new Map<K, Entry>([[summary, { kind: 'summary' }], ...kept]);
    this.block = new Set(preserved.filter((k) => this.block.has(k)));
    const positions: TurnPosition[] = [];
    for (const c of originals) {
      const p = await this.session.appendTurn({
        role: c.entry.role,
        tokens: c.tokens,
        messages: 1,
        pins: [...c.entry.pins],
      });
      this.entries.set(c.key, { ...c.entry, turn: p.turn });
      this.block.add(c.key);
      positions.push(p);
    }
    return positions;
  }

  private entry(k: K): Entry {
    const e = this.entries.get(k);
    if (!e) throw new Error('compaction-guard: a message of the context was never followed');
    return e;
  }
}
