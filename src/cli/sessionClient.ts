/** Reads one session's view from the processor's `/sessions/{id}` (src/http/sessionView.ts). */
import type { sessionView } from '../http/sessionView';
import { ProcessorUnreachableError, UsageError } from './toolErrors';

/** The view as JSON carries it (plain data: the same shape). */
export type SessionView = ReturnType<typeof sessionView>;

export async function fetchSessionView(
  baseUrl: string,
  sessionId: string,
  token: string | null,
): Promise<SessionView> {
  const url = `${baseUrl}/sessions/${encodeURIComponent(sessionId)}`;
  let res: Response;
  try {
    res = await fetch(url, {
      headers: token === null ? {} : { Authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(10_000),
    });
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new ProcessorUnreachableError(
      `cannot reach the processor at ${baseUrl} (${cause?.code ?? cause?.message ?? (e as Error).message}): ` +
        'is `npm start` / `compaction-guard run` running? Point at it with --url or CG_HTTP_HOST / CG_HTTP_PORT',
    );
  }
  const text = await res.text();
  if (res.status === 200) return JSON.parse(text) as SessionView;
  if (res.status === 401)
    throw new UsageError(
      `${url}: the processor requires a bearer token (set CG_HTTP_SESSIONS_TOKEN or --http-sessions-token${token === null ? '' : '; the one given was refused'})`,
    );
  if (res.status === 404) {
    const error = (JSON.parse(text) as { error?: string }).error ?? text;
    throw new UsageError(
      /disabled/.test(error)
        ? `${baseUrl}: ${error}`
        : `unknown session ${JSON.stringify(sessionId)}: the processor at ${baseUrl} does not track it (a typo, a session closed long ago, or one owned by another instance: ask that one with --url)`,
    );
  }
  throw new Error(`${url}: HTTP ${res.status} ${text.slice(0, 300)}`);
}
