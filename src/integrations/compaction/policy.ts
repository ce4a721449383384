/**
 * The policy an integration sends in SessionOpened when the user gives only part of it (or
 * none): the window 128,000 tokens, the ceiling the window, the truncator in the floor's unit,
 * STRICT coverage, spills on. Only the floor and the trigger come from the framework.
 */
import type { Policy } from '../../engine/events';

/** Messages kept verbatim after a summary when none is said (langchain's `keep` default). */
export const DEFAULT_KEEP_MESSAGES = 20;
const DEFAULT_WINDOW_TOKENS = 128_000;

export interface PolicyDefaults {
  /** The floor when none is given (read only then: it may refuse a setting it cannot map). */
  floor: () => Policy['floor'];
  /** The trigger when none is given, for the window. */
  triggerTokens: (windowTokens: number) => number;
}

export function policyOf(given: Partial<Policy>, defaults: PolicyDefaults): Policy {
  const windowTokens = given.windowTokens ?? DEFAULT_WINDOW_TOKENS;
  const floor = given.floor ?? defaults.floor();
  return {
    windowTokens,
    triggerTokens: given.triggerTokens ?? defaults.triggerTokens(windowTokens),
    ceilingTokens: given.ceilingTokens ?? windowTokens,
    floor,
    truncatorUnit: given.truncatorUnit ?? floor.unit,
    coverage: given.coverage ?? 'STRICT',
    spill: given.spill ?? 'ENABLED',
  };
}
