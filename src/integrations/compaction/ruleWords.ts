/**
 * Words by which a user states a rule ("never delete…", "you must…", "always ask…"). A rule
 * lost to compaction is the seed's incident, so this errs towards pinning.
 */
export const RULE_WORDS =
  /\b(must|never|always|do not|don't|dont|under no circumstances|not allowed|forbidden|required to|make sure)\b/i;
