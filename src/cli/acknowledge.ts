/**
 * `compaction-guard acknowledge`: an operator writes off lost content, the way out of a HALT
 * (contract §4, LossAcknowledged). The event is sent out of band (`seq` null, contract §4 step 0):
 * the orchestrator owns the session's sequence and carries on with its own next seq.
 * It shows what the range writes off, asks, sends, and waits for the processor's
 * LOSS_ACKNOWLEDGED advisory. Wrong input is refused before anything is sent.
 */
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline/promises';
import { Command } from 'commander';
import type { Unit } from '../engine/events';
import { UNIT_SYMBOLS } from '../engine/events';
import { type IntervalSet, fromSpans, intersect, toSpans } from '../engine/intervals';
import type { AuditRecord } from '../engine/outputs';
import { type Config, loadConfig, toolOptionHelp } from '../config/config';
import type { SigningKey } from '../authority/signing';
import { type ConfiguredKey, configuredSigningKey } from '../authority/signingKeySource';
import { GuardClient } from '../client/client';
import type { EmbeddedState } from '../services/embedded';
import { OutputDecoder } from '../registry/outputDecoder';
import { settledWithin } from '../time';
import { addConnectionOptions, kafkaConnection, processorUrl, toolLogger } from './connection';
import { type SessionView, fetchSessionView } from './sessionClient';
import { formatLine, formatRange } from './tailFormat';
import { readTopics } from './topicReader';
import { UsageError } from './toolErrors';
import { TOOL_FAILURES, reportingFailures } from './failures';

export interface AcknowledgeArgs {
  session: string;
  unit: Unit;
  start: number;
  end: number;
  /** Who acknowledges; null: the signing key's name. */
  by: string | null;
  reason: string;
}

/** Checks the flags alone (before any connection); each error names the flag and what was expected. */
export function parseAcknowledgeArgs(
  o: Record<string, string | boolean | undefined>,
): AcknowledgeArgs {
  const text = (flag: string, v: unknown) => {
    if (typeof v !== 'string' || v.trim() === '')
      throw new UsageError(
        `--${flag}: ${flag === 'by' ? "empty (free text: who acknowledges; leave it out for the key's name)" : `required (free text${flag === 'reason' ? ': why the loss is acceptable' : ''})`}; nothing was sent`,
      );
    return v;
  };
  const session = text('session', o.session);
  const unit = text('unit', o.unit).toUpperCase();
  if (!(UNIT_SYMBOLS as readonly string[]).includes(unit))
    throw new UsageError(
      `--unit: expected one of ${UNIT_SYMBOLS.join(', ')}, got ${JSON.stringify(o.unit)}; nothing was sent`,
    );
  const range = text('range', o.range);
  const m = /^\s*(\d+)\s*-\s*(\d+)\s*$/.exec(range);
  if (!m)
    throw new UsageError(
      `--range: expected START-END (two non-negative integers, END exclusive), got ${JSON.stringify(range)}; nothing was sent`,
    );
  const start = Number(m[1]);
  const end = Number(m[2]);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end))
    throw new UsageError(`--range: ${range}: numbers too large; nothing was sent`);
  if (end < start)
    throw new UsageError(
      `--range: ${range} is reversed (END ${end} < START ${start}); nothing was sent`,
    );
  return {
    session,
    unit: unit as Unit,
    start,
    end,
    by: o.by === undefined ? null : text('by', o.by),
    reason: text('reason', o.reason),
  };
}

/** What the acknowledgement will do to this session, or why it must not be sent. Pure. */
export function acknowledgementPlan(a: AcknowledgeArgs, v: SessionView): string[] {
  if (v.policy !== null && v.policy.floor.unit !== a.unit)
    throw new UsageError(
      `--unit ${a.unit} is not the floor unit of session ${a.session} (${v.policy.floor.unit}): the processor would only report UNPLACEABLE_RANGE; nothing was sent`,
    );
  const range = fromSpans([{ start: a.start, end: a.end }]);
  const lines: string[] = [];
  const head = v.knownHead;
  lines.push(
    `LossAcknowledged for session ${a.session}: ${formatRange({ unit: a.unit, start: a.start, end: a.end })}, by ${a.by ?? "the signing key's name"}: ${a.reason}`,
  );
  if (v.policy === null) {
    lines.push(
      '  the session is UNKNOWN (no SessionOpened seen): the range only counts toward an UNKNOWN_SESSION decision',
    );
    return lines;
  }
  if (head !== null && a.end > head)
    lines.push(
      `  positions from ${Math.max(a.start, head)} are beyond the known head ${head} and are ignored (clipped to H')`,
    );
  const lostSet: IntervalSet = fromSpans(v.evicted);
  const writtenOff = toSpans(intersect(range, lostSet));
  lines.push(
    `  writes off for good (lost: truncated, in no summary or spill): ${writtenOff.length ? writtenOff.map((s) => formatRange({ unit: a.unit, ...s })).join(' ') : 'nothing (no lost content in the range)'}`,
  );
  const stillLost = toSpans(lostSet).filter((s) => s.start < a.start || s.end > a.end);
  if (stillLost.length > 0)
    lines.push(
      `  stays lost (outside the range): ${spansOf(a.unit, stillLost)} — later requests may still refuse`,
    );
  if (v.gapHead !== null)
    lines.push(
      a.start === 0 && a.end >= v.gapHead
        ? `  writes off the event gap [0,${v.gapHead}) (the sequence is not re-based: the orchestrator keeps its own next seq)`
        : `  does NOT cover the event gap [0,${v.gapHead}): EVENT_GAP refusals continue (use --range 0-${v.gapHead} or more)`,
    );
  lines.push(
    '  lets the next compaction through once for the whole range (used up by its commit, expired by the next truncation)',
  );
  return lines;
}

function spansOf(unit: string, s: { start: number; end: number }[]): string {
  return s.map((x) => formatRange({ unit, ...x })).join(' ');
}

async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(question);
    // A piped answer is not echoed: end the prompt's line.
    if (!process.stdin.isTTY) process.stderr.write('\n');
    return /^y(es)?$/i.test(answer.trim());
  } catch {
    return false; // stdin closed: no answer is no
  } finally {
    rl.close();
  }
}

export interface AcknowledgeOptions {
  yes: boolean;
  timeoutMs: number;
  format: 'avro' | 'json';
}

/** The key that signs, or a UsageError before anything is sent (contract §4b: unsigned is refused). */
function signingKeyFor(
  flags: Record<string, string | undefined>,
  embedded: EmbeddedState | null,
): ConfiguredKey {
  const configured = configuredSigningKey(process.env, flags, embedded);
  if (configured === null)
    throw new UsageError(
      "no signing key: give --key FILE or CG_SIGNING_KEY_FILE (a key with role ACKNOWLEDGE in the processor's ring; " +
        '`compaction-guard keys new` makes one); an unsigned acknowledgement is refused by a processor with a ring; nothing was sent',
    );
  return configured;
}

export async function acknowledge(
  args: AcknowledgeArgs,
  flags: Record<string, string | undefined>,
  o: AcknowledgeOptions,
): Promise<void> {
  // Settings and key before anything is asked or sent: a missing key is one line, exit 2.
  const { config, embedded } = kafkaConnection('acknowledge', flags);
  const { key, file: keyFile, development } = signingKeyFor(flags, embedded);
  const a = { ...args, by: args.by ?? key.name };
  const url = processorUrl(flags);
  const token = loadConfig(process.env, flags).httpSessionsToken;
  const plan = acknowledgementPlan(a, await fetchSessionView(url, a.session, token));
  plan.push(
    `  signed by key ${key.keyId} (${key.name}${development ? ", npm start's development key" : ''}, ${keyFile})`,
  );
  process.stderr.write(plan.join('\n') + '\n');
  if (!o.yes && !(await confirm('Send it? [y/N] ')))
    throw new UsageError('not confirmed; nothing was sent');
  // Read again after the prompt: the session may have moved on while the operator read the plan.
  const { lastEventAt } = await fetchSessionView(url, a.session, token);
  // The one way events are written (the client's producer): sends only, no verdict consumer.
  const client = new GuardClient({
    env: {}, // the settings are resolved already (flags, env vars, a running `npm start`)
    config,
    format: o.format,
    logger: toolLogger(flags),
    signingKey: key,
    verdicts: false,
  });
  await client.connect();
  try {
    // Reading starts at the audit topic's current end, before sending: the advisory cannot be missed.
    const audits = await watchOutOfBandAudits(client, config, a.session);
    try {
      const event = await client.outOfBand(
        {
          type: 'LossAcknowledged',
          sessionId: a.session,
          unit: a.unit,
          range: { start: a.start, end: a.end },
          by: a.by,
          reason: a.reason,
        },
        randomUUID(),
        { lastEventAt },
      );
      process.stderr.write(
        `sent eventId ${event.eventId} to ${config.inputTopic}; waiting up to ${o.timeoutMs / 1000} s for the processor's answer on ${config.auditTopic}\n`,
      );
      const record = await settledWithin(audits.of(event.occurredAt), o.timeoutMs, null);
      process.exitCode = reportAdvisory(record, key, config, o.timeoutMs);
    } finally {
      await audits.stop();
    }
  } finally {
    await client.close();
  }
}

/**
 * The session's out-of-band audit records from the audit topic's current end on. The outputs of
 * an out-of-band event carry inputSeq null and its occurredAt (contract §6): `of(occurredAt)` is
 * the advisory of the event sent with it, read before or after the send returned.
 */
async function watchOutOfBandAudits(
  client: GuardClient,
  config: Config,
  session: string,
): Promise<{ of: (occurredAt: number) => Promise<AuditRecord>; stop: () => Promise<void> }> {
  const decoder = new OutputDecoder(client.registryCodec.registry);
  const seen: AuditRecord[] = [];
  const waiting = new Map<number, (r: AuditRecord) => void>();
  const reader = await readTopics(client.kafkaClient, [config.auditTopic], {
    fromBeginning: false,
    follow: true,
    groupPrefix: `${config.clientId}-acknowledge`,
    onMessage: async (_topic, _partition, m) => {
      if (m.key?.toString('utf8') !== session || m.value === null) return;
      const r = await decoder.decode('audit', m.value);
      if (r.record !== 'audit' || r.value.inputSeq !== null) return;
      seen.push(r.value);
      waiting.get(r.value.occurredAt)?.(r.value);
    },
  });
  return {
    of: (occurredAt) =>
      new Promise<AuditRecord>((resolve) => {
        const before = seen.find((r) => r.occurredAt === occurredAt);
        if (before !== undefined) resolve(before);
        else waiting.set(occurredAt, resolve);
      }),
    stop: () => reader.stop(),
  };
}

/** The processor's answer as the operator reads it; the exit status (0: acknowledged). */
function reportAdvisory(
  record: AuditRecord | null,
  key: SigningKey,
  config: Config,
  timeoutMs: number,
): number {
  if (record === null) {
    process.stderr.write(
      `compaction-guard acknowledge: sent, but no LOSS_ACKNOWLEDGED advisory within ${timeoutMs / 1000} s: is the processor consuming ${config.inputTopic}? The event stays on the topic and is applied when it is read (do not send it again: a second one is a new acknowledgement)\n`,
    );
    return 1;
  }
  process.stdout.write(formatLine({ record: 'audit', value: record }) + '\n');
  if (record.code === 'UNAUTHORIZED_EVENT')
    process.stderr.write(
      `compaction-guard acknowledge: ${unauthorizedLine(record.message, key)}\n`,
    );
  return record.code === 'LOSS_ACKNOWLEDGED' ? 0 : 1;
}

/**
 * Why the processor did not apply the acknowledgement, from its UNAUTHORIZED_EVENT record
 * (src/engine/authorize.ts writes the failed check after "not applied: "), and what to do:
 * one line. Pure.
 */
export function unauthorizedLine(message: string, key: Pick<SigningKey, 'keyId' | 'name'>): string {
  const check = /not applied: ([a-z ]+)/.exec(message)?.[1]?.trim() ?? null;
  const named = `key ${key.keyId} (${key.name})`;
  const fix: Record<string, string> = {
    'no signature': 'the processor received it unsigned: send it again with --key FILE',
    'unknown key': `${named} is not in the processor's ring (CG_TRUSTED_KEYS_FILE): add its entry with role ACKNOWLEDGE and reload the ring (SIGHUP), or use a key that is`,
    'key without the role': `${named} is in the processor's ring without role ACKNOWLEDGE: give it the role there (and reload the ring, SIGHUP), or use a key that has it`,
    'bad signature': `the ring's public key for ${key.keyId} is not this key's: the ring entry and --key FILE must come from the same \`compaction-guard keys new\``,
    expired:
      "the signature expired before the processor read it: is this machine's clock right, and did the processor read the event within 15 minutes?",
  };
  return `not applied (${check ?? 'UNAUTHORIZED_EVENT'}): ${
    (check !== null ? fix[check] : undefined) ??
    `is ${named} in the processor's ring (CG_TRUSTED_KEYS_FILE) with role ACKNOWLEDGE, and this machine's clock right?`
  }`;
}

export function acknowledgeCommand(): Command {
  const cmd = new Command('acknowledge')
    .description(
      "Write off a session's lost range (an out-of-band LossAcknowledged, contract §4), the way out of a HALT; waits for the processor's LOSS_ACKNOWLEDGED advisory.",
    )
    .option('--session <id>', 'the sessionId (required)')
    .option('--unit <unit>', `the session's floor unit: ${UNIT_SYMBOLS.join(', ')} (required)`)
    .option('--range <start-end>', 'the positions to write off, END exclusive, e.g. 0-8 (required)')
    .option(
      '--by <who>',
      "who acknowledges, recorded in the event (default: the signing key's name)",
    )
    .option('--reason <text>', 'why the loss is acceptable (required, recorded in the event)')
    .option('--yes', 'do not ask for confirmation')
    .option('--timeout <seconds>', "how long to wait for the processor's advisory", '30')
    .option(
      '--format <fmt>',
      'avro (registry wire format) or json, as the processor accepts',
      'avro',
    )
    .option(
      '--url <url>',
      "the processor's HTTP base URL (default: CG_HTTP_HOST/CG_HTTP_PORT, or a running `npm start`)",
    )
    .option(toolOptionHelp('signingKeyFile').flags, toolOptionHelp('signingKeyFile').description);
  addConnectionOptions(cmd);
  cmd.addHelpText(
    'after',
    "\nThe event is signed (contract §4b) by the key, valid for 15 minutes from the later of this clock and the session's lastEventAt; without a key nothing is sent." +
      '\nExit status: 0 acknowledged (advisory shown); 1 sent but not confirmed in time, or answered otherwise (UNAUTHORIZED_EVENT: the key is not trusted); 2 invalid input, no signing key, or not confirmed (nothing sent); 3 cannot connect.',
  );
  return cmd.action(async (opts: Record<string, string | boolean | undefined>) => {
    await reportingFailures('acknowledge', TOOL_FAILURES, async () => {
      const { session, unit, range, by, reason, yes, timeout, format, ...flags } = opts;
      const args = parseAcknowledgeArgs({ session, unit, range, by, reason });
      const seconds = Number(timeout);
      if (!Number.isFinite(seconds) || seconds <= 0)
        throw new UsageError(
          `--timeout: expected a positive number of seconds, got ${JSON.stringify(timeout)}`,
        );
      if (format !== 'avro' && format !== 'json')
        throw new UsageError(`--format: expected avro or json, got ${JSON.stringify(format)}`);
      await acknowledge(args, flags as Record<string, string | undefined>, {
        yes: yes === true,
        timeoutMs: seconds * 1000,
        format,
      });
    });
  });
}
