/**
 * Summarizes V8 .cpuprofile files (from `node --cpu-prof`): self and total time per
 * function, optionally only for samples under a given function (e.g. `timeStream`, the timed
 * loop of bench/engine.ts; GC samples in between count too). Inlined functions are charged to
 * the function they were inlined into, as V8 reports them.
 *
 *   npx tsx bench/cpuprofile-summary.ts [--under timeStream] [--top 30] FILE.cpuprofile...
 */
import * as fs from 'fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface Row {
  name: string;
  selfMs: number;
  totalMs: number;
  selfShare: number;
  totalShare: number;
}

function label(n: ProfileNode): string {
  const f = n.callFrame;
  if (f.functionName.startsWith('(')) return f.functionName;
  const file = f.url.split('/').slice(-2).join('/');
  return `${f.functionName || '(anonymous)'}${file ? ` ${file}` : ''}`;
}

const GC = '(garbage collector)';

/**
 * Self and total time per function label, over the samples under `under` (all if null).
 * A GC sample has no JS stack: it counts as under `under` when the JS samples just before
 * and after it both are.
 */
export function summarize(p: Profile, under: string | null): { rows: Row[]; totalMs: number } {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of p.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const stacks: string[][] = [];
  const inScope: boolean[] = [];
  for (const sample of p.samples) {
    const stack: string[] = [];
    let found = under === null;
    for (let id: number | undefined = sample; id !== undefined; id = parent.get(id)) {
      const n = byId.get(id)!;
      if (n.callFrame.functionName === '(root)') break;
      stack.push(label(n));
      if (n.callFrame.functionName === under) {
        found = true;
        break;
      }
    }
    stacks.push(stack);
    inScope.push(found);
  }
  if (under !== null) {
    // GC samples between two in-scope JS samples are in scope.
    let last = false;
    const pending: number[] = [];
    for (let i = 0; i < stacks.length; i++) {
      if (stacks[i]![0] === GC) {
        pending.push(i);
        continue;
      }
      for (const k of pending) inScope[k] = last && inScope[i]!;
      pending.length = 0;
      last = inScope[i]!;
    }
  }
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let totalUs = 0;
  for (let i = 0; i < stacks.length; i++) {
    const stack = stacks[i]!;
    if (!inScope[i] || stack.length === 0) continue;
    const dt = p.timeDeltas[i] ?? 0;
    totalUs += dt;
    self.set(stack[0]!, (self.get(stack[0]!) ?? 0) + dt);
    for (const name of new Set(stack)) total.set(name, (total.get(name) ?? 0) + dt);
  }
  const rows = [...total.keys()].map((name) => ({
    name,
    selfMs: (self.get(name) ?? 0) / 1000,
    totalMs: total.get(name)! / 1000,
    selfShare: (self.get(name) ?? 0) / totalUs,
    totalShare: total.get(name)! / totalUs,
  }));
  return { rows, totalMs: totalUs / 1000 };
}

if (require.main === module) {
  const args = process.argv.slice(2);
  let under: string | null = null;
  let top = 30;
  const files: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--under') under = args[++i] ?? null;
    else if (args[i] === '--top') top = Number(args[++i]);
    else files.push(args[i]!);
  }
  for (const file of files) {
    const { rows, totalMs } = summarize(
      JSON.parse(fs.readFileSync(file, 'utf8')) as Profile,
      under,
    );
    if (totalMs === 0) continue;
    console.log(`${file}: ${totalMs.toFixed(0)} ms${under ? ` under ${under}` : ''}`);
    console.log('self %  self ms  total %  function');
    for (const r of [...rows].sort((a, b) => b.selfMs - a.selfMs).slice(0, top)) {
      console.log(
        `${(100 * r.selfShare).toFixed(1).padStart(6)} ${r.selfMs.toFixed(0).padStart(8)} ${(100 * r.totalShare).toFixed(1).padStart(8)}  ${r.name}`,
      );
    }
  }
}
