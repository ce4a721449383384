/**
 * A session's outbox (src/client/session/outbox.ts) over a transport the test answers by hand:
 * events leave in call order, at most MAX_IN_FLIGHT wait for their acknowledgement, each is
 * persisted before it is sent, and after a failed send or persist nothing more is sent.
 */
import type { ContextEvent } from '../../src/engine/events';
import { GuardSendError } from '../../src/client/errors';
import { MAX_IN_FLIGHT, SessionOutbox } from '../../src/client/session/outbox';

const event = (seq: number) =>
  ({
    type: 'SessionClosed',
    sessionId: 's',
    seq,
    eventId: `e-${seq}`,
    occurredAt: seq,
  }) as ContextEvent;

/** A transport whose sends the test acknowledges or fails, one by one. */
function transport(persist: (() => void | Promise<void>) | null = null) {
  const log: string[] = [];
  const pending = new Map<number, { ok: () => void; fail: (e: Error) => void }>();
  return {
    log,
    pending,
    ack: (seq: number) => pending.get(seq)!.ok(),
    fail: (seq: number, e: Error) => pending.get(seq)!.fail(e),
    t: {
      send: (e: ContextEvent) => {
        log.push(`send ${e.seq}`);
        return new Promise<void>((ok, fail) => pending.set(e.seq!, { ok, fail }));
      },
      persist:
        persist === null
          ? null
          : () => {
              log.push('persist');
              return persist();
            },
      acknowledged: (e: ContextEvent) => log.push(`acked ${e.seq}`),
    },
  };
}

const flush = () => new Promise((r) => setImmediate(r));

describe('SessionOutbox', () => {
  it('sends in call order without waiting for acknowledgements, each persisted first', async () => {
    const x = transport(() => undefined);
    const outbox = new SessionOutbox('s', x.t);
    const done = [0, 1, 2].map((seq) => outbox.submit(() => event(seq)));
    await flush();
    expect(x.log).toEqual(['persist', 'send 0', 'persist', 'send 1', 'persist', 'send 2']);
    x.ack(1);
    x.ack(0);
    x.ack(2);
    expect((await Promise.all(done)).map((e) => e.seq)).toEqual([0, 1, 2]);
    expect(x.log.slice(6)).toEqual(['acked 1', 'acked 0', 'acked 2']);
  });

  it(`holds event ${MAX_IN_FLIGHT + 1} back until one of the ${MAX_IN_FLIGHT} in flight is acknowledged`, async () => {
    const x = transport();
    const outbox = new SessionOutbox('s', x.t);
    const prepared: number[] = [];
    const all = Array.from({ length: MAX_IN_FLIGHT + 1 }, (_, seq) =>
      outbox.submit(() => {
        prepared.push(seq);
        return event(seq);
      }),
    );
    await flush();
    expect(prepared).toHaveLength(MAX_IN_FLIGHT);
    x.ack(0);
    await flush();
    expect(prepared).toHaveLength(MAX_IN_FLIGHT + 1);
    for (let seq = 1; seq <= MAX_IN_FLIGHT; seq++) x.ack(seq);
    await Promise.all(all);
  });

  it('a refused event sends nothing and does not stop the next one', async () => {
    const x = transport();
    const outbox = new SessionOutbox('s', x.t);
    const refused = outbox.submit(() => {
      throw new Error('bad use');
    });
    const next = outbox.submit(() => event(0));
    await expect(refused).rejects.toThrow('bad use');
    await flush();
    x.ack(0);
    await expect(next).resolves.toMatchObject({ seq: 0 });
    expect(x.log).toEqual(['send 0', 'acked 0']);
  });

  it('after a failed send, the send fails with GuardSendError and every later event is refused unsent', async () => {
    const x = transport();
    const outbox = new SessionOutbox('s', x.t);
    const first = outbox.submit(() => event(0));
    await flush();
    x.fail(0, new Error('broker gone'));
    await expect(first).rejects.toThrow(GuardSendError);
    let prepared = false;
    await expect(
      outbox.submit(() => {
        prepared = true;
        return event(1);
      }),
    ).rejects.toThrow(/an earlier send failed \(broker gone\); resume it from its snapshot/);
    expect([prepared, x.log]).toEqual([false, ['send 0']]);
  });

  it('a snapshot that cannot be persisted sends nothing, and nothing after it', async () => {
    const x = transport(() => {
      throw new Error('disk full');
    });
    const outbox = new SessionOutbox('s', x.t);
    await expect(outbox.submit(() => event(0))).rejects.toThrow('disk full');
    await expect(outbox.submit(() => event(1))).rejects.toThrow(GuardSendError);
    expect(x.log).toEqual(['persist']);
  });
});
