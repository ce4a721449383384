/**
 * The guard's answer to Claude Code's compaction hooks, whatever runs them (the command, one
 * process per call; the Agent SDK callbacks, one process): PreCompact asks the guard
 * (CompactionRequested, spilling the transcript's lines when asked) and blocks what it refuses;
 * a compact boundary in the transcript is reported as committed; SessionStart after a
 * compaction puts the pinned turns back verbatim; PostCompact reports a degenerate summary;
 * Stop (each finished response, run in the background) only reports the new turns.
 */
import { randomUUID } from 'node:crypto';
import type { Verdict } from '../../engine/outputs';
import type { GuardedSession, TranscriptRange } from '../../client/session';
import {
  type GuardRefusal,
  describeRefusal,
  haltLines,
  verdictReason,
} from '../compaction/refusal';
import { degenerateSummary, minTokensFor } from '../compaction/summaryCheck';
import type {
  ClaudeHookInput,
  HookAnswer,
  PostCompactInput,
  PreCompactInput,
  SessionStartInput,
  StopInput,
} from './hookTypes';
import {
  type ClaudeRuntime,
  type HookCall,
  followTranscript,
  guardSession,
  reportCompacted,
} from './follow';
import { emptyLedger, ledgerFile, readLedger, withLock, writeLedger } from './ledger';
import { spillStoreOf, stateDirOf } from './options';
import { classifyLine } from './transcript';
import { readRanges } from './transcriptFile';

export type { ClaudeRuntime } from './follow';

/**
 * The answer to one hook call. Never throws: what fails is answered as the guard being down
 * (PreCompact: blocked by default, `onGuardDown`; the others go ahead), and logged.
 */
export async function handleHook(rt: ClaudeRuntime, input: ClaudeHookInput): Promise<HookAnswer> {
  try {
    const stateDir = stateDirOf(rt.options, input.transcript_path);
    const file = ledgerFile(stateDir, input.session_id);
    const { lockStaleMs: staleMs, lockWaitMs: waitMs } = rt.options;
    return await withLock(file, { staleMs, waitMs }, async () => {
      const ledger = (await readLedger(file, input.session_id)) ?? emptyLedger(input.session_id);
      const call: HookCall = { rt, input, ledger, file, stateDir };
      try {
        return await dispatch(call);
      } finally {
        await writeLedger(file, ledger);
      }
    });
  } catch (e) {
    rt.log.error(
      { err: e, event: input.hook_event_name, session: input.session_id },
      'compaction-guard hook failed',
    );
    return stateLost(rt, input, e as Error);
  }
}

function dispatch(call: HookCall): Promise<HookAnswer> {
  const input = call.input;
  switch (input.hook_event_name) {
    case 'PreCompact':
      return onPreCompact(call, input);
    case 'PostCompact':
      return onPostCompact(call, input);
    case 'SessionStart':
      return onSessionStart(call, input);
    case 'Stop':
      return onStop(call, input);
  }
}

/**
 * No ledger to count blocks in (unreadable, locked): PreCompact fails closed, the rest go on;
 * Stop silently (it runs in the background: the log has it, the next hook call tries again).
 */
function stateLost(rt: ClaudeRuntime, input: ClaudeHookInput, e: Error): HookAnswer {
  if (input.hook_event_name === 'Stop') return { kind: 'allow' };
  if (input.hook_event_name !== 'PreCompact')
    return { kind: 'allow', systemMessage: `compaction-guard: ${e.message}` };
  return { kind: 'block', reason: `compaction-guard cannot guard this compaction: ${e.message}` };
}

/** The session followed up to now, or the error that kept it from being reached. */
async function followed(call: HookCall): Promise<GuardedSession | Error> {
  try {
    const session = await guardSession(call);
    await followTranscript(call, session);
    return session;
  } catch (e) {
    call.rt.log.error(
      { err: e, session: call.input.session_id },
      'compaction-guard could not follow the session',
    );
    return e as Error;
  }
}

// ---- PreCompact -------------------------------------------------------------------------------

async function onPreCompact(call: HookCall, input: PreCompactInput): Promise<HookAnswer> {
  const session = await followed(call);
  if (session instanceof Error) return guardDown(call, input, session);
  const head = session.head('TURNS');
  const request = {
    requestId: `claude-code-${randomUUID()}`,
    summaryInput: { start: session.snapshot().verbatimStart, end: head },
    tailStart: head,
  };
  // Pending before it is sent (persisted with the event): the boundary that follows reports it.
  call.ledger.pending = { ...request, approved: false };
  let verdict: Verdict | null = null;
  let error: Error | null = null;
  try {
    verdict = await session.requestCompaction(
      { ...request, unit: 'TURNS', occupancyTokens: call.ledger.contextTokens },
      {
        timeoutMs: call.rt.options.verdictTimeoutMs,
        spill: { store: spillStoreOf(call.rt.options, call.stateDir), transcript: turnLines(call) },
        onVerdict: (v) =>
          call.rt.log.info(
            {
              session: input.session_id,
              decision: v.decision,
              action: v.action,
              diagnostic: v.diagnostic,
            },
            'verdict',
          ),
      },
    );
  } catch (e) {
    error = e as Error;
  }
  if (verdict?.decision === 'APPROVE') {
    call.ledger.pending.approved = true;
    call.ledger.consecutiveBlocks = 0;
    return { kind: 'allow' };
  }
  const refusal: GuardRefusal = {
    reason: verdictReason(verdict),
    sessionId: input.session_id,
    requestId: request.requestId,
    summaryInput: request.summaryInput,
    tailStart: request.tailStart,
    unit: 'TURNS',
    verdict,
    error,
    summary: null,
  };
  if (verdict === null) return guardDown(call, input, error!);
  return blockBounded(call, input, refusalReason(refusal));
}

/**
 * The spill's transcript: each turn's line as Claude Code wrote it, byte for byte (its `\n`
 * included), read from the transcript by the ledger's byte range.
 */
function turnLines(call: HookCall) {
  return async (range: TranscriptRange): Promise<Buffer[]> => {
    const turns = [];
    for (let t = range.firstTurn; t < range.endTurn; t++) turns.push(call.ledger.turns[t]);
    const lines = await readRanges(call.input.transcript_path, turns);
    // The turns up to the first one not held: the spill reports only those (src/client/vouch.ts).
    const missing = lines.indexOf(undefined);
    return (missing < 0 ? lines : lines.slice(0, missing)) as Buffer[];
  };
}

/** Why a refused compaction is blocked, for the user and on-call. */
function refusalReason(r: GuardRefusal): string {
  if (r.reason === 'HALTED') return haltLines(r).join('\n');
  return `${describeRefusal(r)}\nThe transcript is intact; compaction-guard blocks this compaction (\`npx compaction-guard inspect ${r.sessionId}\` shows why).`;
}

/** No verdict: the guard is down, the compaction is blocked by default (onGuardDown). */
function guardDown(call: HookCall, input: PreCompactInput, e: Error): HookAnswer {
  const why = `compaction-guard has no verdict for this compaction (${e.message})`;
  if (call.rt.options.onGuardDown === 'allow')
    return {
      kind: 'allow',
      systemMessage: `${why}: it goes ahead unguarded (CG_CLAUDE_ON_GUARD_DOWN=allow)`,
    };
  return blockBounded(
    call,
    input,
    `${why}, so it is blocked (CG_CLAUDE_ON_GUARD_DOWN=block). Check the broker and the processor.`,
  );
}

/**
 * A block, bounded for automatic compactions (decision 225): after `maxBlocks` in a row the next
 * one goes ahead (Claude Code at its context limit cannot go on otherwise), with a message
 * naming what it may lose; a manual one is always blocked (the user reads why).
 */
function blockBounded(call: HookCall, input: PreCompactInput, reason: string): HookAnswer {
  const { ledger } = call;
  if (input.trigger === 'auto') {
    if (ledger.consecutiveBlocks >= call.rt.options.maxBlocks) {
      call.rt.log.warn(
        { session: input.session_id, blocks: ledger.consecutiveBlocks, reason },
        'automatic compaction let through after the most blocks in a row',
      );
      ledger.consecutiveBlocks = 0;
      return {
        kind: 'allow',
        systemMessage: `compaction-guard let this automatic compaction through after ${call.rt.options.maxBlocks} blocks in a row (CG_CLAUDE_MAX_BLOCKS), so the session is not stranded. It may lose what the guard refused to let go: ${reason}`,
      };
    }
    ledger.consecutiveBlocks++;
  }
  return { kind: 'block', reason };
}

// ---- PostCompact ------------------------------------------------------------------------------

async function onPostCompact(call: HookCall, input: PostCompactInput): Promise<HookAnswer> {
  const session = await followed(call);
  // Still pending: its PreCompact let it through and no boundary was read since.
  if (!(session instanceof Error) && call.ledger.pending !== null)
    await committedAhead(call, session, input);
  const text = summaryText(input.compact_summary);
  const degenerate = degenerateSummary({
    text,
    threw: false,
    summaryTokens: Math.ceil(Buffer.byteLength(text.trim(), 'utf8') / 4),
    minTokens: minTokensFor(undefined, summarizedTokens(call, session)),
  });
  if (degenerate === null) return { kind: 'allow' };
  call.rt.log.warn(
    { session: input.session_id, reason: degenerate, summary: text.slice(0, 200) },
    "Claude Code's compaction summary is degenerate",
  );
  const kept =
    call.rt.options.keepPinned.length > 0
      ? ' The pinned turns were put back verbatim after it.'
      : '';
  return {
    kind: 'allow',
    systemMessage: `compaction-guard: the compaction summary is degenerate (${degenerate}: ${JSON.stringify(text.slice(0, 120))}). What it replaced is still in the transcript (${input.transcript_path}).${kept}`,
  };
}

/**
 * The compaction is reported at PostCompact when the transcript does not show its boundary yet:
 * Claude Code 2.1.337 writes the boundary after its PostCompact hooks ran (and a `-p` session
 * may end before any later hook reads it). The boundary, once read, is then skipped. A failure
 * here leaves it to the boundary.
 */
async function committedAhead(
  call: HookCall,
  session: GuardedSession,
  input: PostCompactInput,
): Promise<void> {
  try {
    await reportCompacted(call, session, input.trigger, { ahead: true });
  } catch (e) {
    call.rt.log.error(
      { err: e, session: input.session_id },
      'compaction-guard could not report the compaction: its transcript boundary will',
    );
  }
}

/** The summary without the `<summary>` tags the model wraps it in. */
function summaryText(summary: string): string {
  const m = /^\s*<summary>([\s\S]*)<\/summary>\s*$/.exec(summary);
  return m ? m[1]! : summary;
}

/** The tokens of the turns the last compaction summarized (0 when unknown). */
function summarizedTokens(call: HookCall, session: GuardedSession | Error): number {
  const span = call.ledger.lastSummarized;
  if (span === null || session instanceof Error || span.end <= span.start) return 0;
  return session.startOf(span.end, 'TOKENS') - session.startOf(span.start, 'TOKENS');
}

// ---- Stop ------------------------------------------------------------------------------------

/**
 * A response finished: the turns it added are reported now, so that a PreCompact has little
 * left to read (decision 234). It never blocks and never fails the session: whatever goes wrong
 * is logged (in `followed`) and the answer is allow.
 */
async function onStop(call: HookCall, _input: StopInput): Promise<HookAnswer> {
  await followed(call);
  return { kind: 'allow' };
}

// ---- SessionStart -----------------------------------------------------------------------------

async function onSessionStart(call: HookCall, input: SessionStartInput): Promise<HookAnswer> {
  const session = await followed(call);
  if (input.source !== 'compact') return { kind: 'allow' };
  const text = await pinnedText(call);
  const down =
    session instanceof Error ? { systemMessage: `compaction-guard: ${session.message}` } : {};
  if (text.length === 0) return { kind: 'allow', ...down };
  return { kind: 'context', additionalContext: text, ...down };
}

/**
 * The text of the turns that carry a kept pin, verbatim, in turn order, each text once (a rule
 * said twice, CLAUDE.md attached again after each compaction), read back from the transcript.
 */
export async function pinnedText(call: HookCall): Promise<string> {
  const kept = call.rt.options.keepPinned;
  const turns = call.ledger.turns.filter((t) => t.pins.some((p) => kept.includes(p)));
  if (turns.length === 0) return '';
  const lines = await readRanges(call.input.transcript_path, turns);
  const texts: string[] = [];
  lines.forEach((line, i) => {
    if (line === undefined) return;
    const entry = classifyLine(line.toString('utf8'), turns[i]!);
    if (entry.kind === 'turn' && entry.text.length > 0 && !texts.includes(entry.text))
      texts.push(entry.text);
  });
  return texts.join('\n\n');
}
