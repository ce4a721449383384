/**
 * Waiting, in one place: a pause, and a deadline on something that may never settle. Each
 * timer is cleared as soon as the outcome is known, so none keeps the process alive for nothing.
 */

/** Resolves after `ms`. `unref`: the pause alone does not keep the process alive. */
export function sleep(ms: number, options: { unref?: boolean } = {}): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    if (options.unref === true) timer.unref();
  });
}

/**
 * `work`'s outcome if it settles within `ms`, else the rejection `timedOut()` returns (called
 * once, when the time is up: the place to note that the wait was abandoned). `work` itself is
 * not cancelled: a later rejection of it is swallowed, since nobody waits for it any more.
 */
export function withTimeout<T>(
  work: Promise<T>,
  ms: number,
  timedOut: () => unknown,
  options: { unref?: boolean } = {},
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut()), ms);
    if (options.unref === true) timer.unref();
  });
  // Abandoned after the deadline, a rejection of `work` would otherwise be unhandled.
  work.catch(() => undefined);
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/**
 * `work`'s value if it settles within `ms`, else `fallback` (a wait that may end either way,
 * e.g. "stopped in time, or not"). A rejection of `work` stays a rejection.
 */
export function settledWithin<T, F>(
  work: Promise<T>,
  ms: number,
  fallback: F,
  options: { unref?: boolean } = {},
): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<F>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
    if (options.unref === true) timer.unref();
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
