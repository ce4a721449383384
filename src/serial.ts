/**
 * Tasks that must not overlap (one download at a time, one compaction of a conversation at a
 * time, one event of a session at a time): each starts once the one before it has settled, in
 * call order, and a failure is only its own caller's.
 */
export class Serial {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => T | Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    // The next task waits for this one to settle, not to succeed: the caller of `run` gets the
    // failure through `result`; the queue itself must go on.
    this.tail = result.catch(() => undefined);
    return result;
  }
}
