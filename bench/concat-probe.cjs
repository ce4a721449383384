/**
 * Times Buffer.concat in a process (kafkajs joins each fetch response's socket chunks with it,
 * network/connection.js `processData`) and prints a summary to stderr when the process is
 * stopped (SIGTERM/SIGINT) or exits. For bench/README.md's e2e profile:
 *
 *   NODE_OPTIONS="--require ./bench/concat-probe.cjs" npm run bench:e2e -- --events 1000000 \
 *     --sessions 10000 --runs 1 --skip kcat,consume-only,passthrough,plain,eos-bench,product-uncached
 *
 * Every Node process of the bench loads it; the processor child's line is the one with the
 * large concatenations.
 */
/* global Buffer, process */
'use strict';

const concat = Buffer.concat;
const LARGE = 1 << 20;
const totals = { small: { calls: 0, ms: 0 }, large: { calls: 0, ms: 0, bytes: 0 } };

Buffer.concat = function timedConcat(list, length) {
  const started = process.hrtime.bigint();
  const out = concat.call(Buffer, list, length);
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const t = out.length >= LARGE ? totals.large : totals.small;
  t.calls++;
  t.ms += ms;
  if (t === totals.large) t.bytes += out.length;
  return out;
};

let reported = false;
function report() {
  if (reported) return;
  reported = true;
  const { small, large } = totals;
  const mib = large.bytes / 1048576;
  process.stderr.write(
    `[concat-probe pid ${process.pid}] ≥ 1 MiB: ${large.calls} calls, ${mib.toFixed(0)} MiB, ` +
      `${large.ms.toFixed(0)} ms (${mib > 0 ? (large.ms / mib).toFixed(2) : '–'} ms/MiB); ` +
      `smaller: ${small.calls} calls, ${small.ms.toFixed(0)} ms\n`,
  );
}
process.on('exit', report);
for (const signal of ['SIGTERM', 'SIGINT']) {
  const onSignal = () => {
    report();
    // The process's own handler stops it; without one, the signal's default action must.
    if (process.listenerCount(signal) === 1) {
      process.removeListener(signal, onSignal);
      process.kill(process.pid, signal);
    }
  };
  process.prependListener(signal, onSignal);
}
