/**
 * A Claude Code session's state between hook calls (each call is a new process), in the state
 * directory under an exclusive lock file, so two hook calls of one session never interleave:
 * the head `<session>.json` (the client's snapshot, the offset read, the pending request, the
 * counts), written atomically (temp file, fsync, rename), and the turns, appended once each to
 * `<session>.turns.jsonl` (turnLog.ts) before the head that names them is written (decision
 * 233). A file that cannot be read as a ledger is an error naming it and what was expected: the
 * guard fails closed.
 */
import { createHash } from 'node:crypto';
import { mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import * as path from 'node:path';
import type { Span } from '../../engine/events';
import type { SessionSnapshot } from '../../client/session';
import { writeAtomically } from '../../authority/keyFiles';
import { errorClass } from '../../errors';
import {
  appendRecords,
  emptyLogState,
  type LedgerTurn,
  LogRecordError,
  type LogState,
  planRecords,
  replayLog,
} from './turnLog';

/** The state file cannot be used: corrupt, of another session, or locked too long. */
export class HookStateError extends errorClass('HOOK_STATE_INVALID', 'HookStateError') {}

export type { LedgerTurn } from './turnLog';

/** The compaction asked for last (reported as committed when the transcript shows it). */
export interface PendingCompaction {
  requestId: string;
  summaryInput: Span;
  tailStart: number;
  approved: boolean;
}

export interface ClaudeLedger {
  version: 2;
  sessionId: string;
  /** The client's snapshot (`persist`); null until the session was opened. */
  snapshot: SessionSnapshot | null;
  /** The transcript's bytes read so far (always at a line's end). */
  offset: number;
  /** Turn i of the guard's session is `turns[i]`. */
  turns: LedgerTurn[];
  pending: PendingCompaction | null;
  /** PreCompact calls of an automatic compaction blocked in a row. */
  consecutiveBlocks: number;
  /** Compactions reported (at their compact boundary, or at PostCompact when that came first). */
  compactions: number;
  /**
   * Compactions reported at PostCompact whose compact boundary the transcript did not hold yet:
   * Claude Code writes it after its PostCompact hooks ran. The next that many boundaries read
   * are not reported again.
   */
  boundariesAhead: number;
  /** The model's last known context size (tokens), from the transcript's usage. */
  contextTokens: number | null;
  /** The span the last compaction summarized (its summary's size is judged against it). */
  lastSummarized: Span | null;
}

export function emptyLedger(sessionId: string): ClaudeLedger {
  return {
    version: 2,
    sessionId,
    snapshot: null,
    offset: 0,
    turns: [],
    pending: null,
    consecutiveBlocks: 0,
    compactions: 0,
    boundariesAhead: 0,
    contextTokens: null,
    lastSummarized: null,
  };
}

/** A session's file: its id when that is a plain name (Claude Code's are UUIDs), else a hash. */
export function ledgerFile(stateDir: string, sessionId: string): string {
  const name = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(sessionId)
    ? sessionId
    : createHash('sha256').update(sessionId).digest('hex');
  return path.join(stateDir, `${name}.json`);
}

/** The turns' log beside a ledger's head. */
export const turnLogFile = (file: string): string => file.replace(/\.json$/, '') + '.turns.jsonl';

/** The head as written: the ledger without its turns, and how much of the log it stands for. */
type LedgerHead = Omit<ClaudeLedger, 'turns'> & { log: { bytes: number; turns: number } };

/** What the log on disk holds, per ledger read or written in this process. */
const logStates = new WeakMap<ClaudeLedger, LogState>();

/** The ledger in `file`, or null when there is none yet. */
export async function readLedger(file: string, sessionId: string): Promise<ClaudeLedger | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new HookStateError(`${file}: cannot be read: ${(e as Error).message}`, { cause: e });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw corrupt(file, `not JSON (${(e as Error).message})`);
  }
  if ((value as { version?: unknown } | null)?.version === 1)
    return checkedLedger(file, sessionId, value); // the single-file form: logged whole at the next write
  const head = checkedHead(file, sessionId, value);
  try {
    const { turns, state } = await replayLog(turnLogFile(file), head.log.bytes, checkedTurn(file));
    if (turns.length !== head.log.turns)
      throw new LogRecordError(
        `the head names ${head.log.turns} turns, the log holds ${turns.length}`,
      );
    const { log: _log, ...rest } = head;
    const ledger: ClaudeLedger = { ...rest, turns };
    logStates.set(ledger, state);
    return ledger;
  } catch (e) {
    if (e instanceof HookStateError) throw e;
    if (e instanceof LogRecordError) throw corrupt(file, `its turns' log: ${e.message}`);
    throw new HookStateError(`${turnLogFile(file)}: cannot be read: ${(e as Error).message}`, {
      cause: e,
    });
  }
}

function corrupt(file: string, what: string): HookStateError {
  return new HookStateError(
    `${file}: not a compaction-guard Claude Code session ledger (version 2): ${what}. ` +
      'The guard blocks compaction until it is repaired or removed (removing it restarts the session at the guard).',
  );
}

const isInt = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

/** A turn as the ledger holds it, checked (`turns[i]` names it in the error). */
const checkedTurn =
  (file: string) =>
  (t: unknown, i: number): LedgerTurn => {
    const turn = t as Partial<LedgerTurn> | null;
    if (
      !turn ||
      !isInt(turn.start) ||
      !isInt(turn.end) ||
      turn.end <= turn.start ||
      typeof turn.role !== 'string' ||
      !Array.isArray(turn.pins)
    )
      throw corrupt(file, `turns[${i}]: expected {start, end, role, pins}`);
    return turn as LedgerTurn;
  };

/** The fields of the head every later read relies on, checked; the snapshot by `resume`. */
function checkedFields(file: string, sessionId: string, value: unknown): Partial<ClaudeLedger> {
  if (typeof value !== 'object' || value === null) throw corrupt(file, 'expected an object');
  const l = value as Partial<ClaudeLedger>;
  if (l.sessionId !== sessionId)
    throw corrupt(file, `expected session ${sessionId}, got ${JSON.stringify(l.sessionId)}`);
  if (!isInt(l.offset)) throw corrupt(file, 'expected offset, an integer ≥ 0');
  if (!isInt(l.consecutiveBlocks))
    throw corrupt(file, 'expected consecutiveBlocks, an integer ≥ 0');
  if (!isInt(l.compactions)) throw corrupt(file, 'expected compactions, an integer ≥ 0');
  // Absent from the ledgers written before it existed: none ahead.
  l.boundariesAhead ??= 0;
  if (!isInt(l.boundariesAhead)) throw corrupt(file, 'expected boundariesAhead, an integer ≥ 0');
  if (
    l.snapshot !== null &&
    (typeof l.snapshot !== 'object' || l.snapshot?.sessionId !== sessionId)
  )
    throw corrupt(file, 'expected snapshot, null or the session snapshot of this session');
  if (
    l.pending !== null &&
    (typeof l.pending !== 'object' || typeof l.pending?.requestId !== 'string')
  )
    throw corrupt(file, 'expected pending, null or {requestId, summaryInput, tailStart}');
  return {
    ...l,
    contextTokens: l.contextTokens ?? null,
    lastSummarized: l.lastSummarized ?? null,
  };
}

function checkedHead(file: string, sessionId: string, value: unknown): LedgerHead {
  const v = value as { version?: unknown; log?: { bytes?: unknown; turns?: unknown } } | null;
  if (v?.version !== 2)
    throw corrupt(file, `expected version 2 (or 1), got ${JSON.stringify(v?.version)}`);
  const head = checkedFields(file, sessionId, value) as LedgerHead;
  if (typeof head.log !== 'object' || !isInt(head.log?.bytes) || !isInt(head.log?.turns))
    throw corrupt(file, "expected log, {bytes, turns}: how much of the turns' log it names");
  return head;
}

/**
 * A ledger of the single-file form (version 1, its turns inline), checked: read as it is, and
 * written in the current form at the next write (every turn logged then, once).
 */
export function checkedLedger(file: string, sessionId: string, value: unknown): ClaudeLedger {
  const l = checkedFields(file, sessionId, value) as Partial<ClaudeLedger>;
  if (!Array.isArray(l.turns)) throw corrupt(file, 'expected turns, an array');
  l.turns.forEach(checkedTurn(file));
  return { ...(l as ClaudeLedger), version: 2 };
}

/**
 * Writes the ledger: the turns and truncations not logged yet appended to the log and synced,
 * then the head naming them written atomically. A kill between any two writes leaves a head
 * and the log's prefix it names, which agree; what was appended past it is never read.
 */
export async function writeLedger(file: string, ledger: ClaudeLedger): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  let state = logStates.get(ledger);
  if (state === undefined) {
    state = emptyLogState();
    logStates.set(ledger, state);
  }
  const plan = planRecords(state, ledger.turns);
  const bytes = await appendRecords(turnLogFile(file), state, plan.records);
  plan.apply();
  const { turns, ...rest } = ledger;
  const head: LedgerHead = { ...rest, version: 2, log: { bytes, turns: turns.length } };
  writeAtomically(file, JSON.stringify(head), 0o600);
}

export interface LockOptions {
  /** A lock file older than this is left by a process that died: it is taken over. */
  staleMs: number;
  /** How long to wait for a live lock before giving up (HookStateError). */
  waitMs: number;
  /** The poll interval while waiting. */
  pollMs?: number;
}

/**
 * Whether the lock's holder (`<pid> <time> <host>`) is gone. Claude Code kills a background
 * (async) hook when `claude -p` exits, so a Stop hook often dies holding the lock; its pid is
 * then free on its host (or reused, and the lock goes stale by age instead). A lock of another
 * host (a shared state directory) is not judged here.
 */
async function holderGone(lock: string): Promise<boolean> {
  const text = await readFile(lock, 'utf8').catch(() => null);
  const m = /^(\d+) \S+ (\S+)\n?$/.exec(text ?? '');
  const pid = Number(m?.[1]);
  if (m?.[2] !== hostname() || !Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid)
    return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Runs `fn` holding `<file>.lock` (created exclusively). A lock whose process is gone, or older
 * than `staleMs` (its hook was killed: Claude Code's hook timeout is 60 s), is removed; a live
 * one is waited for up to `waitMs`, then the call fails closed.
 */
export async function withLock<T>(
  file: string,
  options: LockOptions,
  fn: () => Promise<T>,
): Promise<T> {
  const lock = `${file}.lock`;
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const deadline = Date.now() + options.waitMs;
  for (;;) {
    try {
      const handle = await open(lock, 'wx', 0o600);
      await handle.writeFile(`${process.pid} ${new Date().toISOString()} ${hostname()}\n`);
      await handle.close();
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const held = await stat(lock).catch(() => null);
    if (held && (Date.now() - held.mtimeMs > options.staleMs || (await holderGone(lock)))) {
      await unlink(lock).catch(() => undefined);
      continue;
    }
    if (Date.now() >= deadline)
      throw new HookStateError(
        `${lock}: held by another hook call of this session for more than ${options.waitMs} ms (a stale lock is taken over after ${options.staleMs} ms)`,
      );
    await new Promise((r) => setTimeout(r, options.pollMs ?? 50));
  }
  try {
    return await fn();
  } finally {
    await unlink(lock).catch(() => undefined);
  }
}
