/**
 * The ledger's turns as an append-only file of JSON lines beside the ledger's head
 * (`<session>.turns.jsonl`), so that a hook call reporting n turns writes each turn once instead
 * of the whole list at every event. The head names how many bytes of the log it stands for;
 * the reader replays that prefix only, so a record appended but not yet named by a head (a
 * call killed between the two writes, or in the middle of an append) is never read, and the
 * next write cuts it off before appending (decision 233).
 *
 * Records, replayed in order:
 * - a turn (`{uuid, start, end, role, pins, ...}`): the next turn;
 * - `{"truncated": i}`: turn i was reported truncated;
 * - `{"keep": k}`: the turns from k on are dropped (a turn taken back after it was logged).
 */
import { open, readFile } from 'node:fs/promises';
import type { Pin, Role } from '../../engine/events';

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

/** What the log on disk holds, as far as the head that was read or written names it. */
export interface LogState {
  /** Bytes of the log the head stands for (the rest, if any, is a torn or unnamed tail). */
  bytes: number;
  /** The turns logged, the very objects of the in-memory ledger (to tell one replaced). */
  turns: LedgerTurn[];
  /** Turns whose truncation is logged. */
  truncated: Set<number>;
  /** The tail past `bytes` was cut off in this process already. */
  trimmed: boolean;
}

export const emptyLogState = (): LogState => ({
  bytes: 0,
  turns: [],
  truncated: new Set(),
  trimmed: false,
});

/**
 * A record that is not what the log holds: the message says which and why. Internal: the
 * reader (ledger.ts) turns it into the HookStateError naming the ledger.
 */
export class LogRecordError extends Error {}

/**
 * The turns of the log's first `bytes` bytes. Throws LogRecordError when the file is shorter
 * than the head says (the log was removed or cut by someone else) or a record is malformed.
 */
export async function replayLog(
  file: string,
  bytes: number,
  checkTurn: (t: unknown, i: number) => LedgerTurn,
): Promise<{ turns: LedgerTurn[]; state: LogState }> {
  const state = emptyLogState();
  state.bytes = bytes;
  if (bytes === 0) return { turns: state.turns, state };
  const data = await readFile(file).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return Buffer.alloc(0);
    throw e;
  });
  if (data.length < bytes)
    throw new LogRecordError(
      `the head names ${bytes} bytes of ${file}, which holds ${data.length}`,
    );
  const text = data.subarray(0, bytes).toString('utf8');
  if (!text.endsWith('\n')) throw new LogRecordError(`${file}: byte ${bytes} is not a line's end`);
  const lines = text.slice(0, -1).split('\n');
  lines.forEach((line, n) => {
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch (e) {
      throw new LogRecordError(`${file}: line ${n + 1} is not JSON (${(e as Error).message})`);
    }
    applyRecord(state, record, checkTurn, `${file}: line ${n + 1}`);
  });
  // The ledger's own array: the state's is what the log holds, and moves only when it does.
  return { turns: [...state.turns], state };
}

function applyRecord(
  state: LogState,
  record: unknown,
  checkTurn: (t: unknown, i: number) => LedgerTurn,
  where: string,
): void {
  const r = record as { truncated?: unknown; keep?: unknown };
  if (typeof r === 'object' && r !== null && 'truncated' in r && !('start' in r)) {
    const i = r.truncated;
    if (!Number.isSafeInteger(i) || (i as number) < 0 || (i as number) >= state.turns.length)
      throw new LogRecordError(`${where}: truncated: expected a logged turn, got ${String(i)}`);
    state.turns[i as number]!.truncated = true;
    state.truncated.add(i as number);
    return;
  }
  if (typeof r === 'object' && r !== null && 'keep' in r) {
    const k = r.keep;
    if (!Number.isSafeInteger(k) || (k as number) < 0 || (k as number) > state.turns.length)
      throw new LogRecordError(
        `${where}: keep: expected at most the turns logged, got ${String(k)}`,
      );
    dropFrom(state, k as number);
    return;
  }
  const turn = checkTurn(record, state.turns.length);
  state.turns.push(turn);
  if (turn.truncated) state.truncated.add(state.turns.length - 1);
}

function dropFrom(state: LogState, k: number): void {
  state.turns.length = k;
  for (const i of state.truncated) if (i >= k) state.truncated.delete(i);
}

/**
 * The records that bring the log from `state` to `turns`: a `keep` if a logged turn is no longer
 * the ledger's, the turns not logged yet, and the truncations not logged yet. Only the last
 * logged turns are compared (turns are only ever appended, or the last one taken back), and
 * truncations are looked for among all turns (a boolean each). `state` is brought up to date
 * by `apply`, once the records are on disk.
 */
export function planRecords(
  state: LogState,
  turns: readonly LedgerTurn[],
): { records: string[]; apply: () => void } {
  const records: string[] = [];
  let same = Math.min(state.turns.length, turns.length);
  while (same > 0 && state.turns[same - 1] !== turns[same - 1]) same--;
  const kept = new Set([...state.truncated].filter((i) => i < same));
  if (same < state.turns.length) records.push(JSON.stringify({ keep: same }));
  for (let i = same; i < turns.length; i++) {
    records.push(JSON.stringify(turns[i]));
    if (turns[i]!.truncated) kept.add(i);
  }
  turns.forEach((t, i) => {
    if (t.truncated && !kept.has(i)) {
      records.push(JSON.stringify({ truncated: i }));
      kept.add(i);
    }
  });
  return {
    records,
    apply: () => {
      state.turns.length = same;
      for (let i = same; i < turns.length; i++) state.turns.push(turns[i]!);
      state.truncated = kept;
    },
  };
}

/**
 * Appends `records` at the log's named end and syncs them to disk; the tail past it (a torn or
 * unnamed record) is cut off first, once per process. Returns the log's new named size, which
 * the head written next names.
 */
export async function appendRecords(
  file: string,
  state: LogState,
  records: string[],
): Promise<number> {
  if (records.length === 0 && state.trimmed) return state.bytes;
  const handle = await open(file, 'a', 0o600);
  try {
    if (!state.trimmed) {
      await handle.truncate(state.bytes);
      state.trimmed = true;
    }
    if (records.length > 0) {
      const data = Buffer.from(records.join('\n') + '\n', 'utf8');
      await handle.write(data);
      await handle.sync();
      state.bytes += data.length;
    }
  } catch (e) {
    // Part of a record may be on disk past the named end: cut off by the next append.
    state.trimmed = false;
    throw e;
  } finally {
    await handle.close();
  }
  return state.bytes;
}
