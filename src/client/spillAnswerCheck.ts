/**
 * Whether the processor ignored a spill answer, told from its next spill ask (contract §4b, §5).
 * The client knows whether it signed its answer; the processor, which knows why it refused it,
 * says so only in an UNAUTHORIZED_EVENT audit record the client does not read. What the client
 * does see is the next verdict of the same request: a SpillCompleted that was applied heals
 * every hole inside its range (and, reported from 0, every rule without a hole: its need is
 * `[0, t)` with t within the head), and a SpillFailed that was applied makes the next refusal
 * HALT. So a refusal that still asks for a spill, with every hole inside what the answer
 * reported stored (or after a SpillFailed), means the answer was not applied: a processor with
 * a trusted key ring, and an answer unsigned or signed by a key it does not trust for SPILL.
 * The spill loop then fails the compaction at once (SpillNotTrustedError) instead of spilling
 * again to the same end, and the SpillWorker logs it (docs/decisions.md 170).
 */
import type { SpillCompleted, SpillFailed } from '../engine/events';
import type { UnitRange } from '../engine/outputs';

/** A spill answer as it was sent: its type, what it reported stored, and its signature. */
export type SpillAnswer =
  | Pick<SpillCompleted, 'type' | 'unit' | 'range' | 'signature'>
  | Pick<SpillFailed, 'type' | 'signature'>;

/** `e` as a spill answer, or null when it is none. */
export function spillAnswerOf(e: { type: string }): SpillAnswer | null {
  return e.type === 'SpillCompleted' || e.type === 'SpillFailed' ? (e as SpillAnswer) : null;
}

/**
 * Was `answer` ignored, given the holes of the spill ask that followed it (a verdict's reasons'
 * holes, or a spill request's `holes`)? Pure. False whenever a hole lies outside what the
 * answer reported stored (a spill cannot have healed it, so asking again is no sign), and for
 * a SpillCompleted that reported nothing stored.
 */
export function spillAnswerIgnored(answer: SpillAnswer, holes: readonly UnitRange[]): boolean {
  if (answer.type === 'SpillFailed') return true;
  const { unit, range } = answer;
  if (range.end <= range.start) return false;
  return holes.every((h) => h.unit === unit && h.start >= range.start && h.end <= range.end);
}

/** The holes a verdict names (every reason's). */
export function verdictHoles(v: {
  reasons: readonly { holes: readonly UnitRange[] }[];
}): UnitRange[] {
  return v.reasons.flatMap((r) => r.holes);
}

/** What the producer of an ignored spill answer must change, in one sentence. */
export function ignoredSpillAnswerFix(answer: SpillAnswer): string {
  const keyId = answer.signature?.keyId;
  return keyId === undefined
    ? 'it went unsigned (no signing key), and a processor with a trusted key ring (CG_TRUSTED_KEYS_FILE) applies only signed spill answers: ' +
        'set CG_SIGNING_KEY_FILE, or the signingKey option, to a key with role SPILL in that ring (`compaction-guard keys new` makes one)'
    : `it was signed by key ${keyId}: is that key in the processor's trusted key ring (CG_TRUSTED_KEYS_FILE) with role SPILL, and this machine's clock right? ` +
        "The processor's UNAUTHORIZED_EVENT audit record of the session names the check that failed";
}

/** The one line naming an ignored spill answer, its session and request, and the fix. */
export function ignoredSpillAnswerMessage(
  sessionId: string,
  requestId: string,
  answer: SpillAnswer,
): string {
  const what =
    answer.type === 'SpillCompleted'
      ? `SpillCompleted ${answer.unit} [${answer.range.start},${answer.range.end})`
      : 'SpillFailed';
  return `session ${JSON.stringify(sessionId)} request ${JSON.stringify(requestId)}: the processor did not apply the spill answer just sent (${what}) and asks for the same spill again; ${ignoredSpillAnswerFix(answer)}`;
}
