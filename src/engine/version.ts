/**
 * Stamped on every verdict (`engineVersion`), so that whoever reads a verdict, or replays a
 * topic with `audit`, knows which rules decided it: bump with any change to decisions. What
 * each version implements: 1.1.0: contract rev 10 (out-of-band events, §4 step 0). 2.0.0:
 * contract rev 11 (bounds, bounded state sets, idle expiry, the contested policy, bounded
 * reported lists, signed authority). 3.0.0: contract rev 12 (only events that advance a session
 * move its clocks, extent E, requestEventId).
 */
export const ENGINE_VERSION = 'compaction-guard-engine/3.0.0';
