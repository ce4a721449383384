/**
 * The pins of a Claude Code turn (contract §3), by default: the user's rules and the standing
 * instructions Claude Code attached are CONSTRAINT, a tool call whose result is not in the
 * transcript yet is OPEN_TOOL_CALL. A PinClassifier option replaces the default.
 */
import type { Pin } from '../../engine/events';
import { RULE_WORDS } from '../compaction/ruleWords';
import type { TurnEntry } from './transcript';

export interface PinContext {
  /** The tool calls answered by a result read so far (this read included). */
  answered: ReadonlySet<string>;
}

/** Which pins a turn carries; its answer is sent once, in the turn's TurnAppended. */
export type PinClassifier = (turn: TurnEntry, context: PinContext) => Pin[];

/**
 * A USER turn with a rule word (RULE_WORDS) → CONSTRAINT; CLAUDE.md or memory content
 * (`memory`) → CONSTRAINT; a TOOL_CALL some of whose calls have no result read → OPEN_TOOL_CALL
 * (cheap: only the results read so far are known, so a call is open until its result is read
 * in the same or an earlier read).
 */
export const defaultClaudePins: PinClassifier = (turn, { answered }) => {
  if (turn.memory) return ['CONSTRAINT'];
  if (turn.role === 'USER') return RULE_WORDS.test(turn.text) ? ['CONSTRAINT'] : [];
  if (turn.role === 'TOOL_CALL')
    return turn.toolUseIds.some((id) => !answered.has(id)) ? ['OPEN_TOOL_CALL'] : [];
  return [];
};
