import { retryUntilDone } from '../../src/retry';

describe('a partition resynchronisation is retried until it succeeds', () => {
  it('a failing attempt (e.g. the committed offset unreadable during a leader election) is tried again, not given up', async () => {
    const errors: string[] = [];
    let calls = 0;
    await retryUntilDone(
      async () => {
        calls++;
        if (calls < 3) throw new Error(`no leader (attempt ${calls})`);
      },
      () => false,
      (e) => errors.push((e as Error).message),
      1,
    );
    expect({ calls, errors }).toEqual({
      calls: 3,
      errors: ['no leader (attempt 1)', 'no leader (attempt 2)'],
    });
  });

  it('stops quietly once the partition is gone (revoked or the processor stopping)', async () => {
    let calls = 0;
    let gone = false;
    const failed: unknown[] = [];
    await retryUntilDone(
      async () => {
        calls++;
        if (calls === 2) gone = true;
        throw new Error('still failing');
      },
      () => gone,
      (e) => failed.push(e),
      1,
    );
    expect({ calls, failures: failed.length }).toEqual({ calls: 2, failures: 1 });
  });
});
