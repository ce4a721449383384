import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PRODUCT_NODE_ARGS } from '../../bench/kafka-common';

const root = join(__dirname, '../..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');

describe('the Node options the processor runs with', () => {
  it('are the same in npm start, the Dockerfile and the benchmarks', () => {
    const start = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts
      .start;
    const startArgs = /node ((?:--\S+ )*)bin\/compaction-guard\.js run/.exec(start)?.[1];
    expect(startArgs?.trim().split(' ')).toEqual(PRODUCT_NODE_ARGS);
    const dockerArgs = /^ENV NODE_OPTIONS=(.*)$/m.exec(read('Dockerfile'))?.[1];
    expect(dockerArgs?.trim().split(' ')).toEqual(PRODUCT_NODE_ARGS);
  });
});
