/**
 * At most `limit` tasks at once, the rest in arrival order: the fetch loop's bound on handlers
 * running together (GroupConsumerOptions.partitionsConcurrently).
 */
export class Semaphore {
  private active = 0;
  private readonly queue: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run(task: () => Promise<void>): Promise<void> {
    // A finishing task hands its slot to the next waiter directly, so that a task arriving
    // meanwhile cannot take it too.
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.queue.push(resolve));
    else this.active += 1;
    try {
      await task();
    } finally {
      const next = this.queue.shift();
      if (next) next();
      else this.active -= 1;
    }
  }
}
