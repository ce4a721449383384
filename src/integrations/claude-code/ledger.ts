/**
 * A Claude Code session's state between hook calls (each call is a new process): one JSON file
 * per session in the state directory, written atomically (temp file, fsync, rename) under an
 * exclusive lock file, so two hook calls of one session never interleave. A file that cannot
 * be read as a ledger is an error naming it and what was expected: the guard fails closed.
 */
import { createHash } from 'node:crypto';
import { mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import * as path from 'node:path';
import type { Pin, Role, Span } from '../../engine/events';
import type { SessionSnapshot } from '../../client/session';
import { writeAtomically } from '../../authority/keyFiles';
import { errorClass } from '../../errors';

/** The state file cannot be used: corrupt, of another session, or locked too long. */
export class HookStateError extends errorClass('HOOK_STATE_INVALID', 'HookStateError') {}

/** One turn the guard was told of: where its line is in the transcript, and what it was. */
export interface LedgerTurn {
  uuid: string | null;
  /** Its line's bytes `[start, end)` in the transcript, the `\n` included. */
  start: number;
  end: number;
  role: Role;
  pins: Pin[];
  /** The tool calls its results answer (TOOL_RESULT turns only): a clearing names them. */
  toolResultIds?: string[];
  /** Reported as truncated (its tool results cleared from the context). */
  truncated?: boolean;
}

/** The compaction asked for last (reported as committed when the transcript shows it). */
export interface PendingCompaction {
  requestId: string;
  summaryInput: Span;
  tailStart: number;
  approved: boolean;
}

export interface ClaudeLedger {
  version: 1;
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
    version: 1,
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
  return checkedLedger(file, sessionId, value);
}

function corrupt(file: string, what: string): HookStateError {
  return new HookStateError(
    `${file}: not a compaction-guard Claude Code session ledger (version 1): ${what}. ` +
      'The guard blocks compaction until it is repaired or removed (removing it restarts the session at the guard).',
  );
}

const isInt = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

/** The fields every later read relies on, checked; the snapshot is checked by `resume`. */
export function checkedLedger(file: string, sessionId: string, value: unknown): ClaudeLedger {
  if (typeof value !== 'object' || value === null) throw corrupt(file, 'expected an object');
  const l = value as Partial<ClaudeLedger>;
  if (l.version !== 1) throw corrupt(file, `expected version 1, got ${JSON.stringify(l.version)}`);
  if (l.sessionId !== sessionId)
    throw corrupt(file, `expected session ${sessionId}, got ${JSON.stringify(l.sessionId)}`);
  if (!isInt(l.offset)) throw corrupt(file, 'expected offset, an integer ≥ 0');
  if (!Array.isArray(l.turns)) throw corrupt(file, 'expected turns, an array');
  l.turns.forEach((t, i) => {
    if (
      !t ||
      !isInt(t.start) ||
      !isInt(t.end) ||
      t.end <= t.start ||
      typeof t.role !== 'string' ||
      !Array.isArray(t.pins)
    )
      throw corrupt(file, `turns[${i}]: expected {start, end, role, pins}`);
  });
  if (!isInt(l.consecutiveBlocks))
    throw corrupt(file, 'expected consecutiveBlocks, an integer ≥ 0');
  if (!isInt(l.compactions)) throw corrupt(file, 'expected compactions, an integer ≥ 0');
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
    ...(l as ClaudeLedger),
    contextTokens: l.contextTokens ?? null,
    lastSummarized: l.lastSummarized ?? null,
  };
}

/** Writes the ledger atomically: a crash leaves the old file or the new one, whole. */
export async function writeLedger(file: string, ledger: ClaudeLedger): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  writeAtomically(file, JSON.stringify(ledger), 0o600);
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
 * Runs `fn` holding `<file>.lock` (created exclusively). A lock older than `staleMs` is removed
 * (its hook was killed: Claude Code's hook timeout is 60 s); a live one is waited for up to
 * `waitMs`, then the call fails closed.
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
      await handle.writeFile(`${process.pid} ${new Date().toISOString()}\n`);
      await handle.close();
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const held = await stat(lock).catch(() => null);
    if (held && Date.now() - held.mtimeMs > options.staleMs) {
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
