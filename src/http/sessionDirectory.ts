/**
 * What `/sessions/{id}` reads: where a session is tracked and its committed state. The processor
 * provides it (`Processor.findSession`); the HTTP server never sees a partition task.
 */
import type { SessionState } from '../engine/state';

export interface TrackedSession {
  partition: number;
  /** The committed state (read-only: a copy or the store's own value). */
  state: SessionState;
}

export interface SessionDirectory {
  /** The session if one of this instance's partitions tracks it, else undefined. */
  findSession(sessionId: string): TrackedSession | undefined;
}
