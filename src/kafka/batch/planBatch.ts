/**
 * A batch planned for one transaction: its records decoded (decoder.ts) and added to a planner
 * (planner.ts) in order, within the transaction budget, and planned again when a session's
 * state could not be written. This is the part of a batch before its transaction: nothing is
 * sent while it runs.
 */
import type { DecodedRecord, RawRecord } from '../records';
import { BeforeTransactionError } from '../transport';
import { DecoderUnavailableError } from './decoder';
import type { BatchPlan, PlanContext, PlanLessons } from './plan';
import { BatchPlanner, UnserializableStates } from './planner';

/**
 * A batch planned: its records decoded and added in order, then finished; planned again, with
 * the sessions whose state could not be written checked record by record (`lessons.careful`),
 * until it finishes. Each planned-again session adds to `careful`, so this ends.
 *
 * With `ctx.budget`, the plan takes records only until its planning time or its estimated bytes
 * reach the budget (at least one record): `taken` says how many, and its `nextOffset` is the
 * offset after the last one taken (`nextOffset` as given once all are taken). The caller commits
 * it and plans the rest in another transaction (partition.ts).
 *
 * A record that cannot be decoded yet (DecoderUnavailableError) fails the plan with
 * BeforeTransactionError, its cause the decoder's (the registry's error): nothing of the batch
 * was sent, so reading it again is exact.
 */
export async function planBatch(
  batch: { topic: string; partition: number },
  messages: readonly RawRecord[],
  nextOffset: string,
  ctx: PlanContext & { lessons: PlanLessons },
  decode: (m: RawRecord) => DecodedRecord | Promise<DecodedRecord>,
): Promise<BatchPlan> {
  const { budget } = ctx;
  for (;;) {
    const planner = new BatchPlanner(batch, ctx);
    const started = ctx.timer();
    try {
      let taken = 0;
      for (const m of messages) {
        const d = decode(m);
        planner.add(m, d instanceof Promise ? await d : d);
        taken++;
        if (budget === undefined || taken === messages.length) continue;
        if (planner.estimatedBytes >= budget.bytes || ctx.timer() - started >= budget.ms) break;
      }
      const next =
        taken === messages.length
          ? nextOffset
          : (BigInt(messages[taken - 1]!.offset) + 1n).toString();
      return planner.finish(next);
    } catch (e) {
      planner.release();
      if (e instanceof DecoderUnavailableError) throw new BeforeTransactionError(e.cause);
      const careful = ctx.lessons.careful;
      if (!(e instanceof UnserializableStates) || e.sessionIds.every((id) => careful.has(id)))
        throw e;
      for (const id of e.sessionIds) careful.add(id);
    }
  }
}
