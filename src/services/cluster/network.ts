/**
 * Network namespaces for a local cluster (root and iproute2 only): a bridge with the host on .1
 * and a namespace per member, each behind a veth pair, so that a member can be cut off the
 * network, both ways, by taking its link down: a network partition without iptables.
 */
import { execFileSync } from 'node:child_process';
import { undoIfWeDie } from '../reaper';
import { onExitCleanup } from '../processes';

/** netns only: a namespace for a client (a processor) that can be cut off the cluster. */
export interface ClientNamespace {
  readonly name: string;
  /** Its address, as the host and the nodes see it. */
  readonly address: string;
  /** Prepend to a command to run it inside: `ip netns exec <name>`. */
  readonly prefix: string[];
  isolate(): void;
  heal(): void;
}

let namespaceSeq = 0;

export function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Whether `netns` can work here: root, and `ip netns` answers. */
export function netnsAvailable(): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('ip', ['netns', 'list'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A bridge with the host on .1 and a namespace per member, each behind a veth pair. */
export class Network {
  readonly tag = `${process.pid % 100_000}${String.fromCharCode(97 + (namespaceSeq++ % 26))}`;
  readonly subnet = `10.213.${(process.pid + namespaceSeq * 37) % 250}`;
  readonly bridge = `cgb${this.tag}`;
  readonly hostAddress = `${this.subnet}.1`;
  private readonly namespaces: string[] = [];
  private readonly unregister: () => void;
  /** What the reaper would undo if we were killed before `remove` (reaper.ts). */
  private readonly leftovers: (() => void)[] = [];
  constructor() {
    this.unregister = onExitCleanup(() => this.remove());
    ip('link', 'add', this.bridge, 'type', 'bridge');
    this.leftovers.push(undoIfWeDie({ kind: 'command', argv: ['ip', 'link', 'del', this.bridge] }));
    ip('addr', 'add', `${this.hostAddress}/24`, 'dev', this.bridge);
    ip('link', 'set', this.bridge, 'up');
  }
  /** Namespace `cg<tag><suffix>`, its link `cg<tag><suffix>` on the bridge. */
  add(suffix: string, host: number): { name: string; address: string; link: string } {
    const name = `cg${this.tag}${suffix}`;
    const address = `${this.subnet}.${host}`;
    ip('netns', 'add', name);
    this.namespaces.push(name);
    this.leftovers.push(undoIfWeDie({ kind: 'command', argv: ['ip', 'netns', 'del', name] }));
    ip('link', 'add', name, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', name);
    ip('link', 'set', name, 'master', this.bridge);
    ip('link', 'set', name, 'up');
    ip('-n', name, 'addr', 'add', `${address}/24`, 'dev', 'eth0');
    ip('-n', name, 'link', 'set', 'eth0', 'up');
    ip('-n', name, 'link', 'set', 'lo', 'up');
    return { name, address, link: name };
  }
  remove(): void {
    this.unregister();
    for (const forget of this.leftovers.splice(0)) forget();
    for (const ns of this.namespaces.splice(0)) {
      try {
        ip('link', 'del', ns);
      } catch {
        // gone with its namespace already
      }
      try {
        ip('netns', 'del', ns);
      } catch {
        // already gone
      }
    }
    try {
      ip('link', 'del', this.bridge);
    } catch {
      // already gone
    }
  }
}
