/**
 * What a connection opened, closed again in the reverse order: all of it when `connect()` fails
 * half-way (nothing is left running), and all of it on `close()`.
 */
import type { Logger } from 'pino';

interface Opened {
  what: string;
  close: () => void | Promise<void>;
}

export class OpenResources {
  private opened: Opened[] = [];

  /** `close` undoes what was just opened. */
  add(what: string, close: () => void | Promise<void>): void {
    this.opened.push({ what, close });
  }

  /**
   * Closes everything, last opened first; one that fails to close does not keep the others
   * open. Resolves with the failures (each also logged), in the order they happened.
   */
  async closeAll(log: Pick<Logger, 'warn'>): Promise<unknown[]> {
    const failures: unknown[] = [];
    const opened = this.opened.reverse();
    this.opened = [];
    for (const { what, close } of opened) {
      try {
        await close();
      } catch (e) {
        log.warn({ err: e, what }, 'could not close cleanly');
        failures.push(e);
      }
    }
    return failures;
  }
}
