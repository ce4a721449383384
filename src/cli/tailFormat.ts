/**
 * How `tail` shows output records: one readable line each, or the JSON object of `audit --json`
 * (src/audit/replay.ts `flatten`: `record` first, then the fields of contract §6). Pure.
 */
import type { AuditRecord, SpillRequest, UnitRange, Verdict } from '../engine/outputs';
import type { DecodedOutput } from '../registry/outputDecoder';
import { printable } from './printable';

/** A record of the DLQ topic: the original bytes and the headers the processor added. */
export interface DeadLetterMessage {
  key: string | null;
  value: Buffer | null;
  headers: Record<string, string>;
  /** The Kafka record's timestamp (when it was dead-lettered). */
  timestamp: number;
}

export type TailRecord = DecodedOutput | { record: 'dead-letter'; value: DeadLetterMessage };

export function formatRange(r: { unit: string; start: number; end: number }): string {
  return `${r.unit}[${r.start},${r.end})`;
}

const ranges = (rs: readonly UnitRange[]) => rs.map(formatRange).join(' ') || '(no hole)';

const time = (ms: number | null) => (ms === null ? '-' : new Date(ms).toISOString());

function reasons(v: Pick<Verdict, 'reasons'>): string {
  return v.reasons.map((r) => `${r.code} ${ranges(r.holes)}`).join('; ');
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

function utf8(buf: Buffer): string | null {
  try {
    return UTF8.decode(buf);
  } catch {
    return null;
  }
}

/**
 * The first bytes of a bad record, safe on a terminal: valid UTF-8 with control characters
 * escaped, otherwise printable ASCII as is and every other byte as \xNN.
 */
export function safePreview(buf: Buffer, max = 120): string {
  const head = buf.subarray(0, max);
  const text = utf8(head);
  const shown =
    text !== null
      ? printable(text)
      : [...head]
          .map((b) =>
            b >= 0x20 && b < 0x7f && b !== 0x5c
              ? String.fromCharCode(b)
              : `\\x${b.toString(16).padStart(2, '0')}`,
          )
          .join('');
  return buf.length > max ? `${shown}…` : shown;
}

function verdictLine(v: Verdict): string {
  const parts = [time(v.decidedAt), 'verdict', v.sessionId, v.requestId, v.decision, v.action];
  if (v.basis !== null) parts.push(`basis ${v.basis}`);
  parts.push(`seq ${v.inputSeq}`);
  if (v.reasons.length > 0) parts.push(reasons(v));
  if (v.spillRequestId !== null) parts.push(`spill ${v.spillRequestId}`);
  return parts.join(' ');
}

function spillLine(r: SpillRequest): string {
  return [
    time(r.requestedAt),
    'spill-request',
    r.sessionId,
    r.requestId,
    `range ${formatRange({ unit: r.unit, ...r.range })}`,
    `holes ${ranges(r.holes)}`,
    `spill ${r.spillRequestId}`,
  ].join(' ');
}

function auditLine(a: AuditRecord): string {
  return [
    time(a.occurredAt),
    'audit',
    a.sessionId,
    a.requestId ?? '-',
    a.kind,
    a.code,
    a.inputSeq === null ? 'out-of-band' : `seq ${a.inputSeq}`,
    a.ranges.length > 0 ? ranges(a.ranges) : '',
  ]
    .filter(Boolean)
    .join(' ')
    .concat(`: ${a.message}`);
}

function deadLetterLine(d: DeadLetterMessage): string {
  const h = d.headers;
  const value = d.value ?? Buffer.alloc(0);
  return [
    time(d.timestamp),
    'dead-letter',
    `key ${d.key ?? '(none)'}`,
    `${h['cg.error.code'] ?? '?'}: ${h['cg.error.message'] ?? '?'}`,
    `from ${h['cg.source.topic'] ?? '?'}[${h['cg.source.partition'] ?? '?'}]@${h['cg.source.offset'] ?? '?'}`,
    `value (${value.length} bytes): ${safePreview(value)}`,
  ].join(' ');
}

/** One line, safe on a terminal (ids and messages may quote input). */
export function formatLine(r: TailRecord): string {
  switch (r.record) {
    case 'verdict':
      return printable(verdictLine(r.value));
    case 'spill-request':
      return printable(spillLine(r.value));
    case 'audit':
      return printable(auditLine(r.value));
    case 'dead-letter':
      return printable(deadLetterLine(r.value));
  }
}

/**
 * The `audit --json` object. A dead letter keeps audit's `error` ("CODE: message") and `line`
 * (the value as text; null when it is not UTF-8, then `valueBase64`); Kafka has no line
 * number, so instead of `lineNumber` it names the key and the source topic, partition, offset.
 */
export function jsonRecord(r: TailRecord): Record<string, unknown> {
  if (r.record !== 'dead-letter') return { record: r.record, ...r.value };
  const d = r.value;
  const h = d.headers;
  const line = d.value === null ? null : utf8(d.value);
  return {
    record: 'dead-letter',
    error: `${h['cg.error.code'] ?? '?'}: ${h['cg.error.message'] ?? '?'}`,
    line,
    ...(line === null && d.value !== null ? { valueBase64: d.value.toString('base64') } : {}),
    key: d.key,
    sourceTopic: h['cg.source.topic'] ?? null,
    sourcePartition:
      h['cg.source.partition'] === undefined ? null : Number(h['cg.source.partition']),
    sourceOffset: h['cg.source.offset'] ?? null,
    deadLetteredAt: d.timestamp,
  };
}

/** Whether the record concerns `sessionId` (a dead letter: by its key). */
export function sessionOf(r: TailRecord): string | null {
  return r.record === 'dead-letter' ? r.value.key : r.value.sessionId;
}
