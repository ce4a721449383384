/**
 * Pauses after a failure that `stop` cuts short, so that a stopped consumer is not kept alive by
 * its retry timers (jest's open-handle check, a prompt shutdown).
 */
export class Sleepers {
  private readonly waking = new Set<() => void>();

  /** Resolves after `ms`, or at once on `wakeAll`. */
  sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waking.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waking.add(done);
    });
  }

  wakeAll(): void {
    for (const done of [...this.waking]) done();
  }
}
