/**
 * The GuardClient's lifecycle (src/client/lifecycle.ts): every (from, to) pair of its states is
 * in the table or refused; a call before `connect()` is GuardNotConnectedError, after `close()`
 * GuardClosedError; and what a half-done connect opened is closed, last first, even when one
 * of them fails to close (src/client/resources.ts).
 */
import pino from 'pino';
import {
  GuardClient,
  GuardClosedError,
  GuardNotConnectedError,
  GuardUsageError,
} from '../../src/client';
import { CLIENT_STATES, ClientLifecycle, type ClientState } from '../../src/client/lifecycle';
import { IllegalTransitionError } from '../../src/lifecycle';
import { OpenResources } from '../../src/client/resources';

const ALLOWED: [ClientState, ClientState][] = [
  ['new', 'connecting'],
  ['new', 'closed'],
  ['connecting', 'open'],
  ['connecting', 'closed'],
  ['open', 'closing'],
  ['closing', 'closed'],
];

/** A lifecycle brought to `state` along allowed moves. */
function at(state: ClientState): ClientLifecycle {
  const path: Record<ClientState, ClientState[]> = {
    new: [],
    connecting: ['connecting'],
    open: ['connecting', 'open'],
    closing: ['connecting', 'open', 'closing'],
    closed: ['connecting', 'open', 'closing', 'closed'],
  };
  const l = new ClientLifecycle();
  for (const s of path[state]) l.to(s);
  return l;
}

describe('the client lifecycle', () => {
  it.each(CLIENT_STATES.flatMap((from) => CLIENT_STATES.map((to) => [from, to] as const)))(
    '%s -> %s is allowed exactly when the table says so',
    (from, to) => {
      const l = at(from);
      const allowed = ALLOWED.some(([f, t]) => f === from && t === to);
      if (allowed) {
        l.to(to);
        expect(l.state).toBe(to);
      } else {
        expect(() => l.to(to)).toThrow(`illegal lifecycle transition ${from} -> ${to}`);
        expect(() => l.to(to)).toThrow(IllegalTransitionError);
        expect(l.state).toBe(from);
      }
    },
  );

  it('only an open client takes calls: before, not connected; after, closed', () => {
    expect(() => at('open').requireOpen('send')).not.toThrow();
    for (const s of ['new', 'connecting'] as const)
      expect(() => at(s).requireOpen('send')).toThrow(GuardNotConnectedError);
    for (const s of ['closing', 'closed'] as const)
      expect(() => at(s).requireOpen('send')).toThrow(GuardClosedError);
  });

  it('connect is taken once: again while connecting or open is bad use, after close the client is closed', () => {
    expect(() => at('new').requireNew()).not.toThrow();
    expect(() => at('connecting').requireNew()).toThrow(GuardUsageError);
    expect(() => at('open').requireNew()).toThrow(GuardUsageError);
    expect(() => at('closed').requireNew()).toThrow(GuardClosedError);
  });
});

describe('a GuardClient before connect', () => {
  it('refuses sessions, sends and its settings with GuardNotConnectedError (code GUARD_NOT_CONNECTED)', async () => {
    const client = new GuardClient();
    expect(client.state).toBe('new');
    for (const call of [() => client.session('s'), () => client.config, () => client.kafkaClient]) {
      expect(call).toThrow(GuardNotConnectedError);
      expect(call).toThrow(/not connected \(new\): call connect\(\) first/);
    }
    await expect(
      client.outOfBand({ type: 'SpillFailed', sessionId: 's', spillRequestId: 'x', error: 'e' }),
    ).rejects.toMatchObject({ name: 'GuardNotConnectedError', code: 'GUARD_NOT_CONNECTED' });
  });

  it('closed before it connected, it stays closed: connect is GuardClosedError', async () => {
    const client = new GuardClient();
    await client.close();
    expect(client.state).toBe('closed');
    await expect(client.connect()).rejects.toThrow(GuardClosedError);
    expect(() => client.session('s')).toThrow(GuardClosedError);
  });

  it('a connect whose settings are refused ends closed, with the ConfigError', async () => {
    const client = new GuardClient({
      env: { CG_EMBEDDED_FILE: '/nonexistent/embedded.json' },
    });
    await expect(client.connect()).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    expect(client.state).toBe('closed');
  });
});

describe('OpenResources', () => {
  it('closes the last opened first, goes on past one that fails, and reports the failures', async () => {
    const closed: string[] = [];
    const warned: unknown[] = [];
    const r = new OpenResources();
    r.add('codec', () => void closed.push('codec'));
    r.add('producer', () => {
      closed.push('producer');
      throw new Error('socket hang up');
    });
    r.add('consumer', async () => void closed.push('consumer'));
    const log = pino({ level: 'silent' });
    log.warn = ((o: unknown) => void warned.push(o)) as never;
    const failures = await r.closeAll(log);
    expect(closed).toEqual(['consumer', 'producer', 'codec']);
    expect(failures).toEqual([new Error('socket hang up')]);
    expect(warned).toEqual([expect.objectContaining({ what: 'producer' })]);
    // Closed once: a second closeAll has nothing left to close.
    expect(await r.closeAll(log)).toEqual([]);
    expect(closed).toHaveLength(3);
  });
});
