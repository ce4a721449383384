/**
 * Claude Code transcripts in the format Claude Code 2.1.337 writes (lines modelled on the
 * recorded test/fixtures/claude-code/tool-call-and-compact.jsonl), for tests that drive the hook
 * handlers without the binary: user and assistant messages, tool calls and results, bookkeeping
 * lines, the compact boundary and the summary that follow a compaction.
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import type { ClaudeHookInput } from '../../src/integrations/claude-code/hookTypes';

export class ClaudeTranscript {
  private last: string | null = null;
  /** Each turn line as written (its `\n` included), in order. */
  readonly turnLines: string[] = [];

  constructor(
    readonly file: string,
    readonly sessionId: string = randomUUID(),
  ) {}

  private write(line: Record<string, unknown>, turn: boolean): string {
    const text = `${JSON.stringify(line)}\n`;
    appendFileSync(this.file, text);
    if (turn) this.turnLines.push(text);
    return text;
  }

  private base(uuid: string): Record<string, unknown> {
    const parent = this.last;
    this.last = uuid;
    return {
      parentUuid: parent,
      isSidechain: false,
      uuid,
      timestamp: new Date().toISOString(),
      userType: 'external',
      entrypoint: 'sdk-cli',
      cwd: '/home/user/project',
      sessionId: this.sessionId,
      version: '2.1.337',
      gitBranch: 'HEAD',
    };
  }

  user(content: string | Record<string, unknown>[], uuid = randomUUID()): string {
    this.write(
      {
        type: 'queue-operation',
        operation: 'enqueue',
        timestamp: new Date().toISOString(),
        sessionId: this.sessionId,
      },
      false,
    );
    this.write({ ...this.base(uuid), type: 'user', message: { role: 'user', content } }, true);
    return uuid;
  }

  assistant(content: string | Record<string, unknown>[], uuid = randomUUID()): string {
    const blocks = typeof content === 'string' ? [{ type: 'text', text: content }] : content;
    this.write(
      {
        ...this.base(uuid),
        type: 'assistant',
        message: {
          id: `msg_${uuid.slice(0, 8)}`,
          type: 'message',
          role: 'assistant',
          model: 'claude-opus-5-5',
          content: blocks,
          stop_reason: 'end_turn',
          usage: {
            input_tokens: 1000,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
            output_tokens: 5,
          },
        },
      },
      true,
    );
    this.write(
      { type: 'last-prompt', lastPrompt: 'x', leafUuid: uuid, sessionId: this.sessionId },
      false,
    );
    return uuid;
  }

  /** A tool call and its result (two turns); the call's id. */
  tool(command: string, output: string): string {
    const id = `toolu_${randomUUID().slice(0, 8)}`;
    this.assistant([
      { type: 'tool_use', id, name: 'Bash', input: { command, description: command } },
    ]);
    this.user([{ tool_use_id: id, type: 'tool_result', content: output, is_error: false }]);
    return id;
  }

  /** A tool result as Claude Code writes it once cleared from the context (not a turn). */
  clearedResult(id: string): void {
    this.write(
      {
        ...this.base(randomUUID()),
        type: 'user',
        message: {
          role: 'user',
          content: [
            { tool_use_id: id, type: 'tool_result', content: '[Old tool result content cleared]' },
          ],
        },
      },
      false,
    );
  }

  /** What Claude Code writes once it compacted: the boundary, the summary, the command's lines. */
  compacted(summary: string, preserved: string[]): void {
    const boundary = randomUUID();
    this.write(
      {
        ...this.base(boundary),
        parentUuid: null,
        type: 'system',
        subtype: 'compact_boundary',
        content: 'Conversation compacted',
        isMeta: false,
        level: 'info',
        compactMetadata: {
          trigger: 'manual',
          preTokens: 1005,
          preservedMessages: { uuids: preserved, allUuids: preserved },
        },
      },
      false,
    );
    this.write(
      {
        ...this.base(randomUUID()),
        type: 'user',
        message: {
          role: 'user',
          content: `This session is being continued from a previous conversation.\n\nSummary:\n${summary}`,
        },
        isVisibleInTranscriptOnly: true,
        isCompactSummary: true,
      },
      false,
    );
    this.user(
      '<local-command-stdout>Compacted (ctrl+o to see full summary)</local-command-stdout>',
    );
  }
}

/** A hook input of the transcript's session, as Claude Code sends it, with `fields` added. */
export function hookInput(t: ClaudeTranscript, fields: Record<string, unknown>): ClaudeHookInput {
  return {
    session_id: t.sessionId,
    transcript_path: t.file,
    cwd: '/home/user/project',
    ...fields,
  } as unknown as ClaudeHookInput;
}
