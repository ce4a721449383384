/**
 * `compaction-guard inspect SESSION`: one session as the processor holds it, readable: policy,
 * heads, V, the T/S/P/A/X ranges, pins, what is lost, the pending spill request, the last
 * verdicts and why the last refusal halted. `--json`: the raw `/sessions/{id}` view.
 */
import { Command } from 'commander';
import { loadConfig } from '../config/config';
import { addConnectionOptions, processorUrl } from './connection';
import { printable } from './printable';
import { type SessionView, fetchSessionView } from './sessionClient';
import { formatRange } from './tailFormat';
import { TOOL_FAILURES, reportingFailures } from './failures';

type Spans = readonly { unit: string; start: number; end: number }[];

const spans = (s: Spans) => (s.length === 0 ? 'none' : s.map(formatRange).join(' '));

export function renderSessionView(v: SessionView): string {
  const out: string[] = [];
  out.push(
    `Session ${v.sessionId} (partition ${v.partition})${v.known ? '' : ' — UNKNOWN: no SessionOpened seen'}`,
  );
  if (v.policy) {
    const p = v.policy;
    out.push(
      `Policy: window ${p.windowTokens}, trigger ${p.triggerTokens}, ceiling ${p.ceilingTokens} tokens; ` +
        `floor ${p.floor.span} ${p.floor.unit}; truncator ${p.truncatorUnit}; coverage ${p.coverage}; spill ${p.spill}`,
    );
  }
  out.push(
    `Last seq: ${v.lastSeq ?? 'none'}   heads: TURNS ${v.head.TURNS}, TOKENS ${v.head.TOKENS}, MESSAGES ${v.head.MESSAGES}` +
      `   known head H': ${v.knownHead ?? '-'}   gap head Hg: ${v.gapHead ?? 'none'}   verbatim start V: ${v.verbatimStart}`,
  );
  out.push(`Truncated T:      ${spans(v.truncated)}`);
  out.push(`Summarized S:     ${spans(v.summarized)}`);
  out.push(`Spilled P:        ${spans(v.spilled)}`);
  out.push(`Acknowledged A:   ${spans(v.acknowledged)}`);
  if (v.acknowledged.length > 0)
    out.push(
      `  of which A0 (written off for good): ${spans(v.acknowledgedForGood)}; A1 (for the next compaction): ${spans(v.acknowledgedOnce)}`,
    );
  out.push(`Unspillable X:    ${spans(v.unspillable)}`);
  out.push(`Pins:             ${spans(v.pins)}`);
  out.push(`LOST (evicted, in no summary, spill or acknowledgement): ${spans(v.evicted)}`);
  if (v.gapHead !== null)
    out.push(
      `EVENT GAP: events were lost; everything in [0,${v.gapHead}) is suspect until written off`,
    );
  out.push(
    `Spill failed: ${v.spillFailed ? 'yes (refusals HALT until a SpillCompleted or LossAcknowledged)' : 'no'}`,
  );
  out.push(
    `Pending spill request: ${v.pendingSpill ? `${v.pendingSpill.id} for ${formatRange(v.pendingSpill)}` : 'none'}`,
  );
  if (v.closedAt !== null) out.push(`Closed at: ${new Date(v.closedAt).toISOString()}`);
  out.push(
    `Last event at: ${v.lastEventAt === null ? 'none' : new Date(v.lastEventAt).toISOString()} (a signature must not expire before it)`,
  );
  if (v.lastViolations.length > 0) {
    out.push('Last violations:');
    for (const a of v.lastViolations)
      out.push(
        `  ${a.code} ${a.inputSeq === null ? 'out-of-band' : `seq ${a.inputSeq}`} ${a.ranges.map(formatRange).join(' ') || '(no range)'}: ${a.message}`,
      );
  }
  out.push('Last verdicts:');
  if (v.lastVerdicts.length === 0) {
    // After a restart only the compact stored verdicts survive (src/http/recentVerdicts.ts).
    if (v.storedVerdicts.length === 0) out.push('  (none)');
    for (const s of v.storedVerdicts)
      out.push(
        `  seq ${s.inputSeq} ${s.decision} summaryInput ${formatRange({ unit: s.unit, ...s.summaryInput })} tail ${s.tailStart}`,
      );
  }
  for (const r of v.lastVerdicts) {
    const reasons = r.reasons
      .map((x) => `${x.code} ${x.holes.map(formatRange).join(' ') || '(no hole)'}`)
      .join('; ');
    out.push(
      `  ${r.requestId} seq ${r.inputSeq} ${r.decision} ${r.action}${r.basis ? ` basis ${r.basis}` : ''}${reasons ? `: ${reasons}` : ''}`,
    );
  }
  const lastRefusal = [...v.lastVerdicts].reverse().find((r) => r.decision === 'REFUSE');
  if (lastRefusal?.action === 'HALT')
    out.push(`Why the last refusal HALTed: ${lastRefusal.diagnostic}`);
  const lost = v.evicted.length > 0 ? v.evicted : [];
  if (v.policy && (lost.length > 0 || v.gapHead !== null)) {
    const start = Math.min(...lost.map((s) => s.start), v.gapHead !== null ? 0 : Infinity);
    const end = Math.max(...lost.map((s) => s.end), v.gapHead ?? 0);
    out.push(
      "To write the loss off (after checking with the session's owner):",
      `  compaction-guard acknowledge --session ${v.sessionId} --unit ${v.policy.floor.unit} --range ${start}-${end} --reason WHY --key YOUR.key`,
    );
  }
  return out.map(printable).join('\n') + '\n';
}

export function inspectCommand(): Command {
  const cmd = new Command('inspect')
    .description('Show one session as the processor holds it (its /sessions/{id} view), readable.')
    .argument('<session>', 'the sessionId')
    .option(
      '--url <url>',
      "the processor's HTTP base URL (default: CG_HTTP_HOST/CG_HTTP_PORT, or a running `npm start`)",
    )
    .option('--json', 'the raw /sessions/{id} view');
  addConnectionOptions(cmd);
  cmd.addHelpText(
    'after',
    '\nExit status: 0 shown; 2 unknown session or invalid arguments; 3 processor unreachable.',
  );
  return cmd.action(async (session: string, opts: Record<string, string | boolean | undefined>) => {
    await reportingFailures('inspect', TOOL_FAILURES, async () => {
      const { json, ...rest } = opts;
      const flags = rest as Record<string, string | undefined>;
      const url = processorUrl(flags);
      const token = loadConfig(process.env, flags).httpSessionsToken;
      const view = await fetchSessionView(url, session, token);
      process.stdout.write(
        json === true ? JSON.stringify(view, null, 2) + '\n' : renderSessionView(view),
      );
    });
  });
}
