// Compiled by test/public-types.test.ts: a TypeScript client reads a binary reply's arrays as
// their dtypes, through the package's own exports, without casts (every array was typed as the
// union of the five, and DecodedArrays was not exported).
import { denseFromCsr, type DecodedArrays, type RawReply } from '../../index.js';

export function denseObservations(reply: RawReply): Float32Array {
  const arrays: DecodedArrays = reply.arrays!;
  const masks: Uint8Array = arrays.masks;
  const seats: Int32Array = arrays.seats;
  const rewards: Float32Array = arrays.rewards;
  void [masks, seats, rewards];
  // @ts-expect-error masks are bytes, not floats
  const wrong: Float32Array = arrays.masks;
  void wrong;
  return denseFromCsr(arrays['observations.indptr'], arrays['observations.indices'], arrays['observations.values']);
}
