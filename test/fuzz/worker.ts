/**
 * The fuzzing loop, in a worker thread so that the runner (run.ts) can watch it and stop a
 * record that never returns. It replays the corpus, then runs fast-check on generated cases
 * until its time is up or a case fails. Before each case it copies the case's bytes into the
 * shared buffer, and before each record it stamps the record's index and start time, so that the
 * runner can keep a case the worker could not report itself.
 */
import { parentPort, workerData } from 'node:worker_threads';
import fc from 'fast-check';
import { caseOf, readCorpus } from './corpus';
import { FuzzFailure, runCase, type FuzzCase, type RecordOutcome } from './pipeline';
import { fuzzCases } from './shapes';
import { type Shared, type Tally, type WorkerData, type WorkerMessage, writeCase } from './shared';

const data = workerData as WorkerData;
const shared: Shared = {
  counters: new Float64Array(data.counters),
  bytes: new Uint8Array(data.bytes),
};

const tally: Tally = { deadLetters: {}, audits: {}, verdicts: {}, outputs: 0, largestBytes: 0 };

function count(into: Record<string, number>, key: string): void {
  into[key] = (into[key] ?? 0) + 1;
}

function record(outcomes: readonly RecordOutcome[]): void {
  for (const o of outcomes) {
    if (o.deadLetter !== null) count(tally.deadLetters, o.deadLetter);
    tally.largestBytes = Math.max(tally.largestBytes, o.largestBytes);
    for (const out of o.outputs) {
      tally.outputs++;
      if (out.record === 'audit') count(tally.audits, out.value.code);
      if (out.record === 'verdict') count(tally.verdicts, out.value.decision);
    }
  }
}

async function watched(c: FuzzCase): Promise<void> {
  writeCase(shared, c);
  const outcomes = await runCase(c, (i) => {
    shared.counters[2] = i;
    shared.counters[3] = performance.timeOrigin + performance.now();
  });
  shared.counters[3] = 0;
  shared.counters[0]! += c.records.length;
  shared.counters[1]! += 1;
  record(outcomes);
}

function post(m: WorkerMessage): void {
  parentPort!.postMessage(m);
}

async function replayCorpus(): Promise<boolean> {
  for (const { name, file } of readCorpus()) {
    try {
      await watched(caseOf(file));
    } catch (e) {
      post({
        kind: 'corpus-failed',
        name,
        error: e instanceof FuzzFailure ? e.finding : String(e),
      });
      return false;
    }
  }
  return true;
}

async function fuzz(): Promise<void> {
  const cases = fuzzCases(readCorpus().map(({ file }) => caseOf(file)));
  const deadline = Date.now() + data.seconds * 1000;
  let seed = data.seed;
  while (Date.now() < deadline) {
    const details = await fc.check(
      fc.asyncProperty(cases, (c) => watched(c)),
      {
        seed,
        numRuns: Number.MAX_SAFE_INTEGER,
        interruptAfterTimeLimit: Math.max(1, deadline - Date.now()),
        markInterruptAsFailure: false,
      },
    );
    if (!details.failed) break;
    const c = details.counterexample?.[0];
    const e = details.errorInstance;
    if (c === undefined) break;
    // A slow record is replayed once on a fresh fleet: slow only under the machine's load, it is
    // noise, and the fuzzing goes on with the next seed.
    let again: unknown = null;
    try {
      await runCase(c);
    } catch (x) {
      again = x;
    }
    const hang = e instanceof FuzzFailure && e.finding.kind === 'hang';
    if (hang && again === null) {
      post({ kind: 'flaky', seed, error: e.finding });
      seed++;
      continue;
    }
    post({
      kind: 'found',
      seed: details.seed,
      path: details.counterexamplePath ?? '',
      error: e instanceof FuzzFailure ? e.finding : String(e),
      replayed: again === null ? 'passed' : 'failed again',
      found: c,
    });
    return;
  }
  post({ kind: 'done', tally });
}

void (async () => {
  if (!(await replayCorpus())) return;
  post({ kind: 'corpus-passed' });
  await fuzz();
})();
