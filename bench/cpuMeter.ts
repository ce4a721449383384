/**
 * CPU spent over a timed stretch, read from /proc (Linux): the whole machine's busy cores (every
 * process, the broker's included), one process's CPU (all its threads: V8's garbage collector
 * helpers, libuv's pool) and its main thread's alone. A Node process's per-record work runs on
 * its main thread, so that thread's CPU per event against the wall time per event says whether
 * the path is held by its own JavaScript or by waiting (on the broker, the network, the other
 * core). Off Linux every figure is NaN.
 */
import * as fs from 'fs';
import * as os from 'os';

export interface CpuSnapshot {
  /** Busy and total jiffies of all cores (/proc/stat's first line). */
  machineBusy: number;
  machineTotal: number;
  /** utime + stime of the process and of its main thread, in jiffies; NaN without a pid. */
  process: number;
  mainThread: number;
}

export interface CpuSpent {
  /** Cores busy on average over the stretch, of `os.cpus().length`. */
  machineCores: number;
  /** CPU milliseconds of the process (all threads) and of its main thread. */
  processMs: number;
  mainThreadMs: number;
}

/** USER_HZ: the unit of /proc's CPU times. 100 on every Linux this runs on (`getconf CLK_TCK`). */
const JIFFY_MS = 10;

function readOr(path: string): string | null {
  try {
    return fs.readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** utime + stime of a /proc stat line; its second field (the name) may hold spaces. */
function taskJiffies(path: string): number {
  const text = readOr(path);
  if (text === null) return NaN;
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // Fields after the name start at field 3 (state): utime is field 14, stime 15.
  return Number(fields[11]) + Number(fields[12]);
}

export function cpuSnapshot(pid?: number): CpuSnapshot {
  const line = readOr('/proc/stat')?.split('\n', 1)[0] ?? '';
  const j = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: idle and iowait are not busy.
  const total = j.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = (j[3] ?? NaN) + (j[4] ?? NaN);
  return {
    machineBusy: total - idle,
    machineTotal: j.length >= 8 ? total : NaN,
    process: pid === undefined ? NaN : taskJiffies(`/proc/${pid}/stat`),
    mainThread: pid === undefined ? NaN : taskJiffies(`/proc/${pid}/task/${pid}/stat`),
  };
}

export function cpuSince(before: CpuSnapshot, after: CpuSnapshot): CpuSpent {
  const total = after.machineTotal - before.machineTotal;
  return {
    machineCores:
      total > 0 ? ((after.machineBusy - before.machineBusy) / total) * os.cpus().length : NaN,
    processMs: (after.process - before.process) * JIFFY_MS,
    mainThreadMs: (after.mainThread - before.mainThread) * JIFFY_MS,
  };
}
