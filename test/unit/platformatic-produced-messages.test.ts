/**
 * The transport's records as @platformatic/kafka produces them
 * (src/kafka/platformatic/producedMessages.ts): header names and values as Buffers of their
 * UTF-8 bytes (the library writes a string with `string.length`, wrong beyond ASCII), each
 * value of a repeated header kept, timestamps as bigint, tombstones as null, and a record
 * without a partition refused.
 */
import {
  headersOf,
  libraryMessage,
  libraryMessages,
  recordsOf,
} from '../../src/kafka/platformatic/producedMessages';

it('gives headers as Buffers of their UTF-8 bytes, every value of a repeated name its own entry', () => {
  const headers = headersOf({
    'é-name': 'vålue',
    dup: ['a', Buffer.from([1, 2])],
    gone: undefined,
  });
  const entries = [...headers!].map(([k, v]) => [k.toString('utf8'), [...v]]);
  expect(entries).toEqual([
    ['é-name', [...Buffer.from('vålue', 'utf8')]],
    ['dup', [97]],
    ['dup', [1, 2]],
  ]);
  expect([...headers!.keys()][0]!.length).toBe(Buffer.byteLength('é-name'));
});

it('gives the timestamp as bigint milliseconds, keys as Buffers, tombstones as null values', () => {
  const m = libraryMessage('t', {
    key: 'k',
    value: null,
    partition: 3,
    timestamp: '1733400000123',
  });
  expect(m).toEqual({
    topic: 't',
    partition: 3,
    key: Buffer.from('k'),
    value: null,
    timestamp: 1733400000123n,
  });
  expect(libraryMessage('t', { key: null, value: 'v', partition: 0 }).key).toBeUndefined();
});

it('refuses a record that was not pinned to a partition', () => {
  expect(() => libraryMessages([{ topic: 't', messages: [{ value: 'v' }] }])).toThrow(
    /no partition/,
  );
});

it('recordsOf picks one topic-partition of a request, in order', () => {
  const request = [
    {
      topic: 'a',
      messages: [
        { value: '1', partition: 0 },
        { value: '2', partition: 1 },
      ],
    },
    { topic: 'b', messages: [{ value: '3', partition: 0 }] },
    { topic: 'a', messages: [{ value: '4', partition: 0 }] },
  ];
  expect(recordsOf(request, 'a', 0).map((m) => m.value)).toEqual(['1', '4']);
});
