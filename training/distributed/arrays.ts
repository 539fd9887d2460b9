// Typed arrays as one binary blob, for weights and batches through Redis:
// [u32 count] then per array [u8 kind][3 bytes pad][u32 length], then the arrays' bytes, each
// 4-byte aligned. Little-endian, as every machine the project runs on.

type Numeric = Float32Array | Int32Array | Uint8Array;
const KINDS = [Float32Array, Int32Array, Uint8Array] as const;

export function encodeArrays(arrays: readonly Numeric[]): Buffer {
  const header = 4 + arrays.length * 8;
  const padded = (n: number) => (n + 3) & ~3;
  const total = arrays.reduce((sum, a) => sum + padded(a.byteLength), header);
  const out = Buffer.alloc(total);
  out.writeUInt32LE(arrays.length, 0);
  let offset = header;
  arrays.forEach((a, i) => {
    const kind = KINDS.findIndex((K) => a instanceof K);
    if (kind < 0) throw new Error('only Float32Array, Int32Array and Uint8Array travel');
    out.writeUInt8(kind, 4 + i * 8);
    out.writeUInt32LE(a.length, 8 + i * 8);
    out.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), offset);
    offset += padded(a.byteLength);
  });
  return out;
}

/** The arrays of `encodeArrays`, copied out; throws on a truncated or malformed blob. */
export function decodeArrays(data: Buffer): Numeric[] {
  if (data.length < 4) throw new Error('array blob too short');
  const count = data.readUInt32LE(0);
  const header = 4 + count * 8;
  if (count > 1024 || data.length < header) throw new Error('array blob header is malformed');
  const arrays: Numeric[] = [];
  let offset = header;
  for (let i = 0; i < count; i++) {
    const K = KINDS[data.readUInt8(4 + i * 8)];
    const length = data.readUInt32LE(8 + i * 8);
    if (!K) throw new Error(`array blob: unknown kind at ${i}`);
    const bytes = length * K.BYTES_PER_ELEMENT;
    if (offset + bytes > data.length) throw new Error('array blob is truncated');
    const copy = new Uint8Array(bytes);
    copy.set(data.subarray(offset, offset + bytes));
    arrays.push(new K(copy.buffer));
    offset += (bytes + 3) & ~3;
  }
  return arrays;
}
