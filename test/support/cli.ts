/** The CLI as a person runs it: `node bin/compaction-guard.js ...` in a child process (after `npm run build`). */
import { spawn } from 'node:child_process';
import path from 'node:path';

export const BIN = path.resolve(__dirname, '../../bin/compaction-guard.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  o: { input?: string; timeoutMs?: number; cwd?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env,
      cwd: o.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `compaction-guard ${args.join(' ')}: no exit in ${o.timeoutMs ?? 60_000} ms\n${stderr}`,
        ),
      );
    }, o.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(o.input ?? '');
  });
}
