/**
 * The hook input as Claude Code sends it (JSON on stdin, or the Agent SDK callback's argument),
 * checked field by field: a malformed one is an error naming the field.
 */
import { errorClass } from '../../errors';
import type { ClaudeHookInput } from './hookTypes';

/** The hook input is not one the guard reads; the message names the field. */
export class HookInputError extends errorClass('HOOK_INPUT_INVALID', 'HookInputError') {}

const TRIGGERS = ['manual', 'auto'] as const;
const SOURCES = ['startup', 'resume', 'clear', 'compact', 'fork'] as const;

type Json = Record<string, unknown>;

function field(v: Json, name: string): string {
  const x = v[name];
  if (typeof x !== 'string' || x.length === 0)
    throw new HookInputError(
      `hook input: ${name}: expected a non-empty string, got ${JSON.stringify(x)}`,
    );
  return x;
}

function oneOf<const T extends string>(v: Json, name: string, values: readonly T[]): T {
  const x = v[name];
  if (!values.includes(x as T))
    throw new HookInputError(
      `hook input: ${name}: expected one of ${values.join(', ')}, got ${JSON.stringify(x)}`,
    );
  return x as T;
}

const EVENTS = ['PreCompact', 'PostCompact', 'SessionStart', 'Stop'] as const;

/**
 * The input of a PreCompact, PostCompact, SessionStart or Stop call (other fields are kept), or
 * null for another hook event (not the guard's: answered with nothing).
 */
export function parseHookInput(value: unknown): ClaudeHookInput | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new HookInputError('hook input: expected a JSON object');
  const v = value as Json;
  const event = field(v, 'hook_event_name') as (typeof EVENTS)[number];
  if (!EVENTS.includes(event as (typeof EVENTS)[number])) return null;
  const base = {
    session_id: field(v, 'session_id'),
    transcript_path: field(v, 'transcript_path'),
    cwd: typeof v.cwd === 'string' ? v.cwd : '',
  };
  switch (event) {
    case 'PreCompact': {
      const ci = v.custom_instructions;
      if (ci !== undefined && ci !== null && typeof ci !== 'string')
        throw new HookInputError(
          `hook input: custom_instructions: expected a string or null, got ${JSON.stringify(ci)}`,
        );
      return {
        ...v,
        ...base,
        hook_event_name: event,
        trigger: oneOf(v, 'trigger', TRIGGERS),
        custom_instructions: ci ?? null,
      };
    }
    case 'PostCompact': {
      const summary = v.compact_summary;
      if (typeof summary !== 'string')
        throw new HookInputError(
          `hook input: compact_summary: expected a string, got ${JSON.stringify(summary)}`,
        );
      return {
        ...v,
        ...base,
        hook_event_name: event,
        trigger: oneOf(v, 'trigger', TRIGGERS),
        compact_summary: summary,
      };
    }
    case 'SessionStart':
      return { ...v, ...base, hook_event_name: event, source: oneOf(v, 'source', SOURCES) };
    case 'Stop':
      // Nothing but the transcript is read, so nothing else is required of it.
      return {
        ...v,
        ...base,
        hook_event_name: event,
        stop_hook_active: v.stop_hook_active === true,
      };
  }
}
