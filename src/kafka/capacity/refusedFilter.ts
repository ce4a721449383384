/**
 * The sessions one partition refused at capacity (the capacity gate, gate.ts), as a fixed-size
 * blocked Bloom filter: a session found in it that later gets state starts blind
 * (`blindState`), because events of it were not stored. A false positive only makes a new
 * session start blind: that fails closed, and costs nothing to one whose first event is its
 * SessionOpened (a policy discards the evidence head, contract §4).
 *
 * Size: 16 chunks of 32 KiB (4 Mbit) per partition. An id sets 8 bits of one 512-bit block, and
 * a block lies in one chunk, so adding an id dirties one chunk: a batch writes only the chunks
 * it changed to the changelog (a control record per chunk, changelogKeys.ts), each far below any
 * record limit. Measured over 200k ids not added: with 300k ids added to one partition's
 * filter, 44 % of its bits are set and 0.29 % of other ids are taken for refused; with 1M, 85 %
 * and 28 % (about the fill ratio to the 8th power; the fill ratio is a metric).
 *
 * A batch works on a `RefusedFilterView`: chunks it changes are copied first, and the copies
 * replace the filter's only when its transaction commits (as the batch's state overlay does).
 */
import { hash53 } from '../../engine/hash';

export const CHUNKS = 16;
export const CHUNK_BYTES = 32 * 1024;
const BLOCK_BITS = 512;
const BLOCKS_PER_CHUNK = (CHUNK_BYTES * 8) / BLOCK_BITS;
const BLOCKS = CHUNKS * BLOCKS_PER_CHUNK;
const BITS_PER_ID = 8;

/** Where an id's bits are: a chunk, and 8 bit positions in it (within one 512-bit block). */
interface Place {
  chunk: number;
  /** The block's first bit in the chunk. */
  first: number;
  /** Bit i is at `first + ((a + i * step) % 512)`. */
  a: number;
  step: number;
}

const scratch: Place = { chunk: 0, first: 0, a: 0, step: 1 };

/** The id's place, in a shared object (valid until the next call). */
function place(sessionId: string): Place {
  const h = hash53(sessionId);
  const low = h % 2 ** 32;
  const block = low % BLOCKS;
  scratch.chunk = Math.floor(block / BLOCKS_PER_CHUNK);
  scratch.first = (block % BLOCKS_PER_CHUNK) * BLOCK_BITS;
  scratch.a = Math.floor(low / BLOCKS); // 19 bits
  scratch.step = (Math.floor(h / 2 ** 32) % BLOCK_BITS) | 1; // from the other 21 bits
  return scratch;
}

function bitAt(p: Place, i: number): number {
  return p.first + ((p.a + i * p.step) % BLOCK_BITS);
}

function allSet(chunk: Uint8Array, p: Place): boolean {
  for (let i = 0; i < BITS_PER_ID; i++) {
    const bit = bitAt(p, i);
    if ((chunk[bit >>> 3]! & (1 << (bit & 7))) === 0) return false;
  }
  return true;
}

function popcount(chunk: Uint8Array): number {
  let n = 0;
  for (let b of chunk) {
    while (b !== 0) {
      b &= b - 1;
      n++;
    }
  }
  return n;
}

export class RefusedFilter {
  private chunks: Uint8Array[] = Array.from({ length: CHUNKS }, () => new Uint8Array(CHUNK_BYTES));
  private setBits = 0;

  clear(): void {
    this.chunks = Array.from({ length: CHUNKS }, () => new Uint8Array(CHUNK_BYTES));
    this.setBits = 0;
  }

  chunk(i: number): Uint8Array {
    return this.chunks[i]!;
  }

  has(sessionId: string): boolean {
    const p = place(sessionId);
    return allSet(this.chunks[p.chunk]!, p);
  }

  /**
   * A chunk as restored from the changelog (null: a tombstone, the chunk cleared). Bytes of
   * another length are not this filter's: the chunk is taken as full (fail closed: every id
   * placed in it counts as refused).
   */
  restore(i: number, bytes: Uint8Array | null): void {
    if (i < 0 || i >= CHUNKS) return;
    const c = new Uint8Array(CHUNK_BYTES);
    if (bytes === null) {
      // cleared
    } else if (bytes.length === CHUNK_BYTES) c.set(bytes);
    else c.fill(0xff);
    this.replace(i, c);
  }

  /** Installs a committed batch's copy of chunk `i`. */
  replace(i: number, c: Uint8Array): void {
    this.setBits += popcount(c) - popcount(this.chunks[i]!);
    this.chunks[i] = c;
  }

  /** The share of bits set, 0..1: the false positive rate is about its 8th power. */
  get fill(): number {
    return this.setBits / (CHUNKS * CHUNK_BYTES * 8);
  }
}

/** One batch's view of a filter: changed chunks are its own copies until `commit`. */
export class RefusedFilterView {
  private readonly copies = new Map<number, Uint8Array>();

  constructor(private readonly filter: RefusedFilter) {}

  has(sessionId: string): boolean {
    const p = place(sessionId);
    return allSet(this.copies.get(p.chunk) ?? this.filter.chunk(p.chunk), p);
  }

  add(sessionId: string): void {
    const p = place(sessionId);
    let c = this.copies.get(p.chunk);
    if (c === undefined) {
      c = this.filter.chunk(p.chunk).slice();
      this.copies.set(p.chunk, c);
    }
    for (let i = 0; i < BITS_PER_ID; i++) {
      const bit = bitAt(p, i);
      c[bit >>> 3] = c[bit >>> 3]! | (1 << (bit & 7));
    }
  }

  /** The chunks this batch changed, by index (what its changelog records carry). */
  changed(): ReadonlyMap<number, Uint8Array> {
    return this.copies;
  }

  /** The batch committed: its chunks become the filter's. */
  commit(): void {
    for (const [i, c] of this.copies) this.filter.replace(i, c);
  }
}
