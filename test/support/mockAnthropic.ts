/**
 * A local stand-in for the Anthropic Messages API, for running the real Claude Code binary with
 * no network: `ANTHROPIC_BASE_URL=<url>` and a dummy key. It listens on 127.0.0.1 (a free port),
 * answers `POST /v1/messages` (streaming SSE, or one JSON message when the request does not ask
 * for a stream) and `POST /v1/messages/count_tokens`, and records every request it receives,
 * any path, so a test can read what the model was sent and see that nothing else was asked for.
 *
 * Claude Code's compaction is an ordinary `/v1/messages` call whose last user message asks for a
 * summary; the mock tells it from a turn by that request's wording (`isSummaryRequest`) and
 * answers it with the scripted summary, which may be empty or an API error on demand.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The parts of a Messages API request body the mock and the tests read. */
export interface MessagesRequestBody {
  model: string;
  stream?: boolean;
  system?: unknown;
  messages: { role: string; content: string | { type: string; text?: string }[] }[];
  [field: string]: unknown;
}

/** One request the mock received, in arrival order. */
export interface RecordedRequest {
  method: string;
  /** The path with its query (`/v1/messages?beta=true`). */
  url: string;
  /** What the mock took it for. */
  kind: 'turn' | 'summary' | 'count_tokens' | 'other';
  /** The parsed JSON body (null when empty or not JSON). */
  body: MessagesRequestBody | null;
  /** The body exactly as received. */
  raw: string;
}

/** What the mock answers one model call with. */
export type MockReply =
  | { text: string; inputTokens?: number }
  /** An API error (400 is not retried by the client, 5xx and 429 are, with back-off). */
  | { error: { status: number; type: string; message: string } };

/** The summary the mock answers a summary request with. */
export type SummaryScript = string | { error: { status: number; type: string; message: string } };

export interface MockAnthropicOptions {
  /** The answer to a turn (`n`: how many turns were answered before it); default "Answer n". */
  answer?: (request: MessagesRequestBody, n: number) => MockReply;
  /** The summary (`n`: how many summaries were asked for before it); default "<summary>Summary n</summary>". */
  summary?: (request: MessagesRequestBody, n: number) => SummaryScript;
  /** usage.input_tokens reported on every answer unless the reply sets its own; default 1000. */
  inputTokens?: number;
}

/**
 * The wording of Claude Code's compaction prompts (2.1.337: "…a detailed summary of the
 * conversation so far", "…of this conversation", "…of the RECENT portion of the conversation").
 */
const SUMMARY_REQUEST = /create a detailed summary of (the|this) /i;

/** The text of a message's content: the string, or its text blocks joined. */
export function messageText(content: MessagesRequestBody['messages'][number]['content']): string {
  return typeof content === 'string' ? content : content.map((b) => b.text ?? '').join('');
}

/**
 * Whether a Messages request asks for a compaction summary: a message after the last assistant
 * message (the turn being asked) says so. Not only the last message: Claude Code puts a hook's
 * output (SessionStart `resume`) after the summary prompt.
 */
export function isSummaryRequest(body: MessagesRequestBody): boolean {
  const lastAnswer = body.messages.map((m) => m.role).lastIndexOf('assistant');
  return body.messages
    .slice(lastAnswer + 1)
    .some((m) => m.role === 'user' && SUMMARY_REQUEST.test(messageText(m.content)));
}

export class MockAnthropic {
  readonly requests: RecordedRequest[] = [];
  /** usage.input_tokens of the next answers (drives Claude Code's auto-compaction). */
  inputTokens: number;
  private turns = 0;
  private summaries = 0;

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly options: MockAnthropicOptions,
  ) {
    this.inputTokens = options.inputTokens ?? 1000;
  }

  static async start(options: MockAnthropicOptions = {}): Promise<MockAnthropic> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    const mock = new MockAnthropic(server, `http://127.0.0.1:${port}`, options);
    server.on('request', (req, res) => void mock.handle(req, res));
    return mock;
  }

  /** The model calls of one kind, in order. */
  of(kind: RecordedRequest['kind']): RecordedRequest[] {
    return this.requests.filter((r) => r.kind === kind);
  }

  /** Stops listening and drops open connections: the port is free when this resolves. */
  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve, reject) => this.server.close((e) => (e ? reject(e) : resolve())));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await bodyOf(req);
    const body = parsed(raw);
    const url = req.url ?? '';
    const kind = kindOf(req.method ?? '', url, body);
    this.requests.push({ method: req.method ?? '', url, kind, body, raw });
    if (kind === 'other' || body === null)
      return sendJson(res, 404, apiError('not_found_error', `mock: no ${url}`));
    if (kind === 'count_tokens') return sendJson(res, 200, { input_tokens: this.inputTokens });
    const reply = kind === 'summary' ? this.summaryReply(body) : this.turnReply(body);
    if ('error' in reply)
      return sendJson(res, reply.error.status, apiError(reply.error.type, reply.error.message));
    const message = assistantMessage(
      body.model,
      reply.text,
      reply.inputTokens ?? this.inputTokens,
      this.requests.length,
    );
    if (body.stream === true) streamMessage(res, message);
    else sendJson(res, 200, message);
  }

  private turnReply(body: MessagesRequestBody): MockReply {
    const n = this.turns++;
    return this.options.answer?.(body, n) ?? { text: `Answer ${n}` };
  }

  private summaryReply(body: MessagesRequestBody): MockReply {
    const n = this.summaries++;
    const script = this.options.summary?.(body, n) ?? `<summary>Summary ${n}</summary>`;
    return typeof script === 'string' ? { text: script } : script;
  }
}

function kindOf(
  method: string,
  url: string,
  body: MessagesRequestBody | null,
): RecordedRequest['kind'] {
  const path = url.split('?')[0];
  if (method !== 'POST') return 'other';
  if (path === '/v1/messages/count_tokens') return 'count_tokens';
  if (path !== '/v1/messages' || body === null || !Array.isArray(body.messages)) return 'other';
  return isSummaryRequest(body) ? 'summary' : 'turn';
}

function bodyOf(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parsed(raw: string): MessagesRequestBody | null {
  try {
    return raw === '' ? null : (JSON.parse(raw) as MessagesRequestBody);
  } catch {
    return null;
  }
}

function apiError(type: string, message: string) {
  return { type: 'error', error: { type, message } };
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

interface AssistantMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: { type: 'text'; text: string }[];
  stop_reason: 'end_turn';
  stop_sequence: null;
  usage: { input_tokens: number; output_tokens: number };
}

function assistantMessage(
  model: string,
  text: string,
  inputTokens: number,
  n: number,
): AssistantMessage {
  return {
    id: `msg_mock_${n}`,
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: inputTokens, output_tokens: Math.max(1, Math.ceil(text.length / 4)) },
  };
}

/** The message as the API streams it: message_start, one text block, message_delta, message_stop. */
function streamMessage(res: ServerResponse, m: AssistantMessage): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const event = (type: string, data: object) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  const text = m.content[0]?.text ?? '';
  event('message_start', {
    message: { ...m, content: [], stop_reason: null, usage: { ...m.usage, output_tokens: 1 } },
  });
  event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
  event('content_block_delta', { index: 0, delta: { type: 'text_delta', text } });
  event('content_block_stop', { index: 0 });
  event('message_delta', {
    delta: { stop_reason: m.stop_reason, stop_sequence: null },
    usage: { output_tokens: m.usage.output_tokens },
  });
  event('message_stop', {});
  res.end();
}
