/**
 * One hook call's hold on its session: the guard's session opened (first call) or resumed from
 * the ledger's snapshot, and the transcript followed from where the last call stopped: each new
 * turn reported (TurnAppended), each compact boundary reported as the compaction committed.
 */
import { randomUUID } from 'node:crypto';
import type { GuardedSession } from '../../client/session';
import type { ClaudeHookInput, HookRuntime } from './hookTypes';
import { type ClaudeLedger, HookStateError, type PendingCompaction, writeLedger } from './ledger';
import { type ResolvedClaudeCodeGuardOptions, claudePolicy } from './options';
import { parseTranscript, type BoundaryEntry, type TurnEntry } from './transcript';
import { readFrom } from './transcriptFile';

export type ClaudeRuntime = HookRuntime<ResolvedClaudeCodeGuardOptions>;

/** What a handler holds while it runs (under the session's lock). */
export interface HookCall {
  rt: ClaudeRuntime;
  input: ClaudeHookInput;
  ledger: ClaudeLedger;
  /** The ledger's file. */
  file: string;
  stateDir: string;
}

/** The session at the guard: opened with the policy on first sight, else resumed. */
export async function guardSession(call: HookCall): Promise<GuardedSession> {
  const client = await call.rt.client();
  const options = {
    now: call.rt.now,
    // Before each event is sent: the ledger (turns, offset, pending request) and the snapshot
    // that lists the event are written together, so a killed hook call resumes consistently.
    persist: async (snapshot: ClaudeLedger['snapshot']) => {
      call.ledger.snapshot = snapshot;
      await writeLedger(call.file, call.ledger);
    },
  };
  if (call.ledger.snapshot !== null) return client.resume(call.ledger.snapshot, options);
  const session = client.session(call.input.session_id, options);
  await session.open(claudePolicy(call.rt.options));
  return session;
}

/** Reads what the transcript gained since the last call and reports it, in order. */
export async function followTranscript(call: HookCall, session: GuardedSession): Promise<void> {
  const { ledger } = call;
  const bytes = await readFrom(call.input.transcript_path, ledger.offset);
  const { entries, next } = parseTranscript(bytes, ledger.offset);
  const answered = new Set(entries.flatMap((e) => (e.kind === 'turn' ? e.toolResultIds : [])));
  for (const e of entries) {
    if (e.kind === 'turn') await appendTurn(call, session, e, answered);
    else if (e.kind === 'boundary') await boundary(call, session, e);
    else if (e.kind === 'cleared') await cleared(call, session, e.toolResultIds);
    else if (e.kind === 'unreadable')
      call.rt.log.warn(
        { transcript: call.input.transcript_path, start: e.start, error: e.error },
        'a transcript line is not JSON: not reported as a turn',
      );
    ledger.offset = e.end;
  }
  ledger.offset = next;
}

async function appendTurn(
  call: HookCall,
  session: GuardedSession,
  e: TurnEntry,
  answered: ReadonlySet<string>,
): Promise<void> {
  const { ledger } = call;
  const pins = call.rt.options.pins(e, { answered });
  const expected = ledger.turns.length;
  const before = { offset: ledger.offset, contextTokens: ledger.contextTokens };
  // Recorded before the send, so that the snapshot persisted with the event has it.
  ledger.turns.push({
    uuid: e.uuid,
    start: e.start,
    end: e.end,
    role: e.role,
    pins,
    ...(e.toolResultIds.length > 0 ? { toolResultIds: e.toolResultIds } : {}),
  });
  ledger.offset = e.end;
  if (e.contextTokens !== null) ledger.contextTokens = e.contextTokens;
  try {
    const position = await session.appendTurn({ role: e.role, tokens: e.tokens, pins });
    if (position.turn !== expected)
      throw new HookStateError(
        `${call.file}: the ledger holds ${expected} turns but the guard's session placed this one at turn ${position.turn}`,
      );
  } catch (err) {
    // Not recorded by the session (refused before it was sent): neither in the ledger.
    if (session.head('TURNS') === expected) {
      ledger.turns.pop();
      Object.assign(ledger, before);
    }
    throw err;
  }
}

/**
 * Tool results Claude Code cleared from the context: the turns that held them left it, with
 * nothing standing for them (a Truncated, BUDGET_ENFORCEMENT: Claude Code clears them to save
 * context), each turn once.
 */
async function cleared(call: HookCall, session: GuardedSession, ids: string[]): Promise<void> {
  const { turns } = call.ledger;
  for (let i = 0; i < turns.length; i++) {
    const turn = turns[i]!;
    if (turn.truncated || !turn.toolResultIds?.some((id) => ids.includes(id))) continue;
    turn.truncated = true;
    await session.truncated({
      unit: 'TURNS',
      range: { start: i, end: i + 1 },
      reason: 'BUDGET_ENFORCEMENT',
    });
  }
}

/**
 * A compact boundary: the compaction happened. Reported here unless a PostCompact call reported
 * it already, before Claude Code had written this line (`boundariesAhead`).
 */
async function boundary(call: HookCall, session: GuardedSession, e: BoundaryEntry): Promise<void> {
  const { ledger } = call;
  if (ledger.boundariesAhead > 0) {
    ledger.boundariesAhead--;
    ledger.offset = e.end;
    return;
  }
  ledger.offset = e.end;
  await reportCompacted(call, session, e.trigger, { ahead: false });
}

/**
 * A compaction that happened, reported as committed exactly as it was asked (decision 224): the
 * pending request's span and tailStart, so that an approved one matches its approval; one that
 * was never approved (the guard down and `allow`, the block bound, no hook) is reported all the
 * same, under a request of its own, and the guard records it as committed without approval.
 * `ahead`: reported before its boundary is in the transcript (PostCompact), which then skips it.
 */
export async function reportCompacted(
  call: HookCall,
  session: GuardedSession,
  trigger: string | null,
  { ahead }: { ahead: boolean },
): Promise<void> {
  const { ledger } = call;
  const pending: PendingCompaction = ledger.pending ?? unrequested(session);
  if (!pending.approved)
    call.rt.log.warn(
      { session: call.input.session_id, requestId: pending.requestId, trigger },
      'Claude Code compacted without the guard approving it: reported as committed all the same',
    );
  ledger.pending = null;
  ledger.compactions++;
  ledger.consecutiveBlocks = 0;
  ledger.lastSummarized = pending.summaryInput;
  // Counted before the event is sent, so the ledger persisted with it says so (a killed call).
  if (ahead) ledger.boundariesAhead++;
  await session.committed({
    requestId: pending.requestId,
    unit: 'TURNS',
    summaryInput: pending.summaryInput,
    tailStart: pending.tailStart,
  });
}

/** The compaction the transcript shows when none was asked for: everything before the head. */
function unrequested(session: GuardedSession): PendingCompaction {
  const head = session.head('TURNS');
  return {
    requestId: `claude-code-unrequested-${randomUUID()}`,
    summaryInput: { start: session.snapshot().verbatimStart, end: head },
    tailStart: head,
    approved: false,
  };
}
