/** Stamped on every verdict (`engineVersion`): bump with any change to decisions. 1.1.0: contract rev 10 (out-of-band events, §4 step 0). */
export const ENGINE_VERSION = 'compaction-guard-engine/1.1.0';
