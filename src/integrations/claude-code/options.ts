/**
 * What the Claude Code guard is configured by: options given in code (the Agent SDK hooks), on
 * top of the CG_CLAUDE_* env vars (CLAUDE_CODE_SETTINGS, src/config/settings.ts), on top of the
 * defaults. The policy it opens each session with follows from them (decision 223).
 */
import * as path from 'node:path';
import type { Pin, Policy } from '../../engine/events';
import { claudeCodeSettings } from '../../config/config';
import { FileSpillStore, type SpillStore } from '../../client/spill';
import { DEFAULT_KEPT_PINS, keptPins } from '../compaction/keepPinned';
import { defaultClaudePins, type PinClassifier } from './pins';

export interface ClaudeCodeGuardOptions {
  /** Where the sessions' ledgers go; default `<dirname(transcript_path)>/.compaction-guard`. */
  stateDir?: string;
  /** Where spills go (any SpillStore); default a FileSpillStore in `spillDir`. */
  spillStore?: SpillStore;
  /** The FileSpillStore directory when no `spillStore` is given; default `<state dir>/spills`. */
  spillDir?: string;
  /** The policy floor in turns (the last ones kept verbatim or spilled); default 4. */
  floorTurns?: number;
  /** The policy window in tokens; trigger 0.8x, ceiling 1x. Default 200,000. */
  windowTokens?: number;
  /** The policy spill mode; DISABLED: a refusal HALTs. Default ENABLED. */
  spill?: Policy['spill'];
  /** Automatic compactions blocked in a row before the next one is let through; default 3. */
  maxBlocks?: number;
  /** PreCompact when no verdict comes: 'block' (default) or 'allow'. */
  onGuardDown?: 'block' | 'allow';
  /** The pins put back verbatim after a compaction; default CONSTRAINT and PLAN; false: off. */
  keepPinned?: boolean | Pin[];
  /** The wait per verdict (ms); default 20,000 (Claude Code's hook timeout is 60 s). */
  verdictTimeoutMs?: number;
  /** The pins of a turn; default defaultClaudePins. */
  pins?: PinClassifier;
  /** A ledger lock older than this is taken over (ms); default 90,000. */
  lockStaleMs?: number;
  /** How long a hook call waits for another call's lock (ms); default 30,000. */
  lockWaitMs?: number;
}

export interface ResolvedClaudeCodeGuardOptions {
  stateDir: string | null;
  spillStore: SpillStore | null;
  spillDir: string | null;
  floorTurns: number;
  windowTokens: number;
  spill: Policy['spill'];
  maxBlocks: number;
  onGuardDown: 'block' | 'allow';
  keepPinned: readonly Pin[];
  verdictTimeoutMs: number;
  pins: PinClassifier;
  lockStaleMs: number;
  lockWaitMs: number;
}

const DEFAULT_LOCK_STALE_MS = 90_000;
const DEFAULT_LOCK_WAIT_MS = 30_000;
const TRIGGER_SHARE = 0.8;

/** The options given, then the env vars (a malformed one is a ConfigError naming it), then the defaults. */
export function resolveClaudeCodeOptions(
  given: ClaudeCodeGuardOptions = {},
  env: NodeJS.ProcessEnv = process.env,
): ResolvedClaudeCodeGuardOptions {
  const s = claudeCodeSettings(env);
  return {
    stateDir: given.stateDir ?? s.stateDir,
    spillStore: given.spillStore ?? null,
    spillDir: given.spillDir ?? s.spillDir,
    floorTurns: given.floorTurns ?? s.floorTurns,
    windowTokens: given.windowTokens ?? s.windowTokens,
    spill: given.spill ?? s.spill,
    maxBlocks: given.maxBlocks ?? s.maxBlocks,
    onGuardDown: given.onGuardDown ?? s.onGuardDown,
    keepPinned: given.keepPinned !== undefined ? keptPins(given.keepPinned) : s.keepPinned,
    verdictTimeoutMs: given.verdictTimeoutMs ?? s.verdictTimeoutMs,
    pins: given.pins ?? defaultClaudePins,
    lockStaleMs: given.lockStaleMs ?? DEFAULT_LOCK_STALE_MS,
    lockWaitMs: given.lockWaitMs ?? DEFAULT_LOCK_WAIT_MS,
  };
}

/** The policy a session is opened with: floor and truncator in TURNS, STRICT coverage. */
export function claudePolicy(o: ResolvedClaudeCodeGuardOptions): Policy {
  return {
    windowTokens: o.windowTokens,
    triggerTokens: Math.floor(o.windowTokens * TRIGGER_SHARE),
    ceilingTokens: o.windowTokens,
    floor: { unit: 'TURNS', span: o.floorTurns },
    truncatorUnit: 'TURNS',
    coverage: 'STRICT',
    spill: o.spill,
  };
}

/** The state directory of a session whose transcript is `transcriptPath`. */
export function stateDirOf(o: ResolvedClaudeCodeGuardOptions, transcriptPath: string): string {
  return o.stateDir ?? path.join(path.dirname(transcriptPath), '.compaction-guard');
}

/** The spill store: the one given, else files under the spill directory. */
export function spillStoreOf(o: ResolvedClaudeCodeGuardOptions, stateDir: string): SpillStore {
  return o.spillStore ?? new FileSpillStore(o.spillDir ?? path.join(stateDir, 'spills'));
}

export { DEFAULT_KEPT_PINS };
