/**
 * Stamped on every verdict (`engineVersion`): bump with any change to decisions. 1.1.0: contract
 * rev 10 (out-of-band events, §4 step 0). 2.0.0: contract rev 11 (bounds, bounded state sets,
 * idle expiry, the contested policy, bounded reported lists, signed authority). 3.0.0: contract
 * rev 12 (only events that advance a session move its clocks, extent E, requestEventId).
 */
export const ENGINE_VERSION = 'compaction-guard-engine/3.0.0';
