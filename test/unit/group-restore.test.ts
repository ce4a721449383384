/**
 * restoreGroup (src/kafka/groupRestore.ts) with tasks and a host in memory: a partition revoked
 * while the group's restore is being tried again no longer takes part in it. Its new owner
 * keeps committing it, so a read of it stays behind the group's committed offset, and judging
 * it held the partitions still owned in `restoring` until the next rebalance.
 */
import pino from 'pino';
import { type RestoreHost, type RestoringTask, restoreGroup } from '../../src/kafka/groupRestore';
import type { RestoreTarget } from '../../src/kafka/restore';

class Task implements RestoringTask {
  ended = false;
  sessionCount = 0;
  restoredAt: (string | null)[] = [];
  private settled: Promise<void> = Promise.resolve();
  constructor(readonly partition: number) {}
  beginRestore(settled: Promise<void>): void {
    this.settled = settled;
  }
  whenSettled(): Promise<void> {
    return this.settled;
  }
  async renewProducer(): Promise<void> {}
  async prepareRestore(): Promise<RestoreTarget> {
    return { partition: this.partition } as RestoreTarget;
  }
  restored(position: string | null): void {
    this.restoredAt.push(position);
  }
}

/**
 * Every changelog read finds each partition at input position 10. The group's committed offset
 * of partition 1 is 10 at first; once `moved`, another member has committed it up to 50.
 */
function host(reads: number[][]): RestoreHost & { moved: boolean } {
  const h = {
    moved: false,
    log: pino({ level: 'silent' }),
    observer: {},
    clock: () => 0,
    stopping: () => false,
    readinessChanged: () => undefined,
    retryPauseMs: 1,
    readChangelog: async (targets: RestoreTarget[]) => {
      reads.push(targets.map((t) => t.partition));
      for (const t of targets) t.position = '10';
    },
    committedOffsets: async (partitions: readonly number[]) =>
      new Map(partitions.map((p) => [p, p === 1 && h.moved ? '50' : '10'])),
  };
  return h;
}

describe('restoreGroup', () => {
  it('restores the partitions still owned when one is revoked during the read (not judged)', async () => {
    const reads: number[][] = [];
    const h = host(reads);
    const tasks = [new Task(0), new Task(1), new Task(2)];
    // Partition 1 is revoked during the read: another member owns it and keeps committing.
    h.moved = true;
    const readChangelog = h.readChangelog;
    h.readChangelog = async (targets) => {
      await readChangelog(targets);
      tasks[1]!.ended = true;
    };
    restoreGroup(tasks, h);
    await tasks[0]!.whenSettled();
    expect(tasks[0]!.restoredAt).toEqual(['10']);
    expect(tasks[2]!.restoredAt).toEqual(['10']);
    expect(reads).toEqual([[0, 1, 2]]);
  });

  it('leaves a partition revoked after a failed attempt out of the next one', async () => {
    const reads: number[][] = [];
    const h = host(reads);
    const tasks = [new Task(0), new Task(1), new Task(2)];
    // The first read is behind for partition 1 (its new owner already committed it); then the
    // revocation arrives.
    h.moved = true;
    const committedOffsets = h.committedOffsets;
    h.committedOffsets = async (partitions) => {
      const committed = await committedOffsets(partitions);
      tasks[1]!.ended = true;
      return committed;
    };
    restoreGroup(tasks, h);
    await tasks[0]!.whenSettled();
    expect(reads).toEqual([
      [0, 1, 2],
      [0, 2],
    ]);
    expect(tasks[0]!.restoredAt).toEqual(['10']);
    expect(tasks[2]!.restoredAt).toEqual(['10']);
    expect(tasks[1]!.restoredAt).toEqual([]);
  });

  it('still reads again while an owned partition is behind the committed offset', async () => {
    const reads: number[][] = [];
    const h = host(reads);
    const tasks = [new Task(0), new Task(1)];
    h.moved = true;
    const readChangelog = h.readChangelog;
    h.readChangelog = async (targets) => {
      await readChangelog(targets);
      if (reads.length === 3) h.moved = false;
    };
    restoreGroup(tasks, h);
    await tasks[0]!.whenSettled();
    expect(reads).toEqual([
      [0, 1],
      [0, 1],
      [0, 1],
    ]);
    expect(tasks[1]!.restoredAt).toEqual(['10']);
  });
});
