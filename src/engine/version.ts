/** Stamped on every verdict (`engineVersion`): bump with any change to decisions. */
export const ENGINE_VERSION = 'compaction-guard-engine/1.0.0';
