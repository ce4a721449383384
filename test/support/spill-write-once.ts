/** One FileSpillStore write, for a test that watches its system calls: `tsx spill-write-once.ts ROOT`. */
import { FileSpillStore } from '../../src/client/spill';

void new FileSpillStore(process.argv[2]!)
  .write({
    sessionId: 'session',
    spillRequestId: 'request',
    unit: 'TURNS',
    range: { start: 0, end: 1 },
    content: Buffer.from('turn 0'),
  })
  .then((handle) => process.stdout.write(`${handle}\n`));
