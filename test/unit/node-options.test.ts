import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PRODUCT_ENV, PRODUCT_NODE_ARGS } from '../../bench/kafka-common';

const root = join(__dirname, '../..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');

describe('the Node options and environment the processor runs with', () => {
  it('are the same in npm start, the Dockerfile and the benchmarks', () => {
    const start = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts
      .start;
    const startArgs = /node ((?:--\S+ )*)bin\/compaction-guard\.js run/.exec(start)?.[1];
    expect(startArgs?.trim().split(' ')).toEqual(PRODUCT_NODE_ARGS);
    const dockerArgs = /^ENV NODE_OPTIONS=(.*)$/m.exec(read('Dockerfile'))?.[1];
    expect(dockerArgs?.trim().split(' ')).toEqual(PRODUCT_NODE_ARGS);
  });

  it('run with the same environment in npm start, the Dockerfile and the benchmarks', () => {
    const start = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts
      .start;
    const startEnv = /&& ((?:\w+=\S+ )*)exec node /.exec(start)?.[1] ?? '';
    const pairs = (text: string, pattern: RegExp) =>
      Object.fromEntries([...text.matchAll(pattern)].map((m) => [m[1], m[2]]));
    expect(pairs(startEnv, /(\w+)=(\S+)/g)).toEqual(PRODUCT_ENV);
    const dockerEnv = pairs(read('Dockerfile'), /^ENV (\w+)=(\S+)$/gm);
    delete dockerEnv.NODE_ENV;
    delete dockerEnv.NODE_OPTIONS;
    // The image's own settings (CG_HTTP_*: a container listens on all interfaces) are checked by
    // test/unit/compose.test.ts.
    for (const name of Object.keys(dockerEnv)) if (name.startsWith('CG_')) delete dockerEnv[name];
    expect(dockerEnv).toEqual(PRODUCT_ENV);
  });
});
