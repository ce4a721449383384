/**
 * The one line a person waits for after `npm start`: where the processor's HTTP server, the
 * brokers and the registry are, printed once the processor is ready. With embedded services it
 * also writes them to the state file (src/services/embedded.ts) for the on-call commands, and
 * removes it when the process ends.
 */
import type { Config } from '../config/config';
import type { DevelopmentKeys } from '../authority/developmentKeys';
import { httpUrlOf } from './connection';
import { embeddedStatePath, removeEmbeddedState, writeEmbeddedState } from '../services/embedded';

const POLL_MS = 200;

export interface Announcement {
  /** Resolves once the line was printed (never, if the processor never gets ready). */
  ready: Promise<void>;
  /** Stops waiting and removes this process' state file. */
  stop(): void;
}

/** What the line is made of: the parts of a started processor (run.ts' `Running`) it reads. */
export interface Started {
  processor: { isReady(): boolean };
  config: Config;
  httpPort: number;
  developmentKeys: DevelopmentKeys | null;
}

export function announceWhenReady(
  running: Started,
  embedded: boolean,
  out: NodeJS.WritableStream = process.stderr,
  env: NodeJS.ProcessEnv = process.env,
): Announcement {
  const pid = process.pid;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  // A hard exit (process.exit, an uncaught error) must not leave a file pointing at nothing;
  // readEmbeddedState also checks the pid, for kill -9.
  const cleanup = () => (embedded ? removeEmbeddedState(pid, env) : undefined);
  process.once('exit', cleanup);
  const ready = new Promise<void>((resolve) => {
    const check = () => {
      if (stopped) return;
      if (!running.processor.isReady()) {
        timer = setTimeout(check, POLL_MS);
        return;
      }
      const { config } = running;
      const httpUrl = httpUrlOf(config.httpHost, running.httpPort);
      let where = '';
      if (embedded && config.registryUrl !== null) {
        writeEmbeddedState(
          {
            brokers: config.brokers,
            registryUrl: config.registryUrl,
            httpUrl,
            pid,
            startedAt: new Date().toISOString(),
            ...(running.developmentKeys
              ? { signingKeyFile: running.developmentKeys.signingKeyFile }
              : {}),
            ...(config.trustedKeysFile !== null ? { trustedKeysFile: config.trustedKeysFile } : {}),
          },
          env,
        );
        const key = running.developmentKeys
          ? `; development signing key ${running.developmentKeys.signingKeyFile}`
          : '';
        where = `  (saved in ${embeddedStatePath(env)} for tail, inspect, acknowledge, simulate${key})`;
      }
      out.write(
        `compaction-guard ready: ${httpUrl} (/metrics, /sessions/{id})  brokers ${config.brokers.join(',')}  registry ${config.registryUrl ?? '(none)'}${where}\n`,
      );
      resolve();
    };
    check();
  });
  return {
    ready,
    stop() {
      stopped = true;
      clearTimeout(timer);
      cleanup();
    },
  };
}
