/**
 * The settings files `hook claude-code install` and `uninstall` change, read and written so that
 * nothing of the user's is lost: a file that is not a JSON object is refused (never overwritten),
 * a change is written whole or not at all (a temporary file renamed over it), and a file that
 * does not change is not written. The merge itself is settings.ts.
 */
import { existsSync, mkdirSync, readFileSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '../../config/settings';
import { replaceKeyFile } from '../../authority/keyFileAccess';
import type { ClaudeSettings } from './settings';

/**
 * Which settings file (Claude Code's own names): `project` is shared through the repository,
 * `local` is the project's but not committed, `user` applies to every project of this user.
 */
export type SettingsScope = 'project' | 'local' | 'user';

export function settingsPath(
  scope: SettingsScope,
  projectDir: string,
  home = os.homedir(),
): string {
  switch (scope) {
    case 'project':
      return path.resolve(projectDir, '.claude', 'settings.json');
    case 'local':
      return path.resolve(projectDir, '.claude', 'settings.local.json');
    case 'user':
      return path.resolve(home, '.claude', 'settings.json');
  }
}

/** A settings file as read: its object, whether it exists, and the indentation to write it back. */
export interface SettingsFile {
  file: string;
  exists: boolean;
  settings: ClaudeSettings;
  indent: string;
}

/** Line and column (1-based) of a character offset in `text`. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, column: (before.at(-1) ?? '').length + 1 };
}

/** Why `text` is not a settings object (naming the line and column JSON.parse stopped at), or its object. */
export function parseSettings(text: string, file: string): ClaudeSettings {
  // An empty file holds nothing to keep: it reads as no settings.
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const message = (e as Error).message.replace(/\s*\(line \d+ column \d+\)$/, '');
    const at = /at position (\d+)/.exec(message);
    const where =
      at === null
        ? ''
        : (({ line, column }) => ` at line ${line}, column ${column}`)(
            lineColumn(text, Number(at[1])),
          );
    throw new ConfigError(
      `${file} is not valid JSON${where} (${message}); nothing was written: fix the file (or move it away) and run again`,
      { cause: e },
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ConfigError(
      `${file} is not a JSON object (Claude Code's settings are one); nothing was written`,
    );
  return value as ClaudeSettings;
}

/** The indentation of the file's first indented line ("  " when there is none). */
const indentOf = (text: string): string => /^([ \t]+)\S/m.exec(text)?.[1] ?? '  ';

/** Reads the settings file; one that does not exist reads as `{}`. */
export function readSettingsFile(file: string): SettingsFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { file, exists: false, settings: {}, indent: '  ' };
    throw new ConfigError(`${file} cannot be read (${code ?? (e as Error).message})`, { cause: e });
  }
  return { file, exists: true, settings: parseSettings(text, file), indent: indentOf(text) };
}

/**
 * Writes the settings whole (a reader sees the old file or the new one). The file keeps its
 * permission bits (less write for group and others: whoever can write a settings file can make
 * Claude Code run their commands) and, when it is a symbolic link, stays one: its target is
 * written. A new file (and its `.claude` directory) is created under the umask.
 */
export function writeSettingsFile(s: SettingsFile, settings: ClaudeSettings): void {
  const target = s.exists && existsSync(s.file) ? realpathSync(s.file) : s.file;
  try {
    mkdirSync(path.dirname(target), { recursive: true });
    replaceKeyFile(target, JSON.stringify(settings, null, s.indent) + '\n', 0o666);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new ConfigError(
      `${s.file} cannot be written (${code ?? (e as Error).message}); it is unchanged`,
      {
        cause: e,
      },
    );
  }
}
