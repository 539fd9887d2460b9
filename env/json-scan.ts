// Checks of JSON text that JSON.parse does not make, for every layer that reads JSON it does not
// trust (bridge requests, the CLI's records and configs, checkpoint files).
//
// One pass over a request's bytes before JSON.parse, refusing the shapes that only padding has
// and that cost the parser far more per byte than real requests do. Per MiB, JSON.parse took
// 5-10 ms for a record's actions or a 512-row policy.act, but 30-100 ms for 300,000 empty arrays
// and ~90 ms for one object of 90,000 keys (past ~64 keys an object is built the slow way: 351
// objects of 256 keys took 19 ms, 1,406 of 64 keys 5 ms) and 70-190 ms for small objects whose
// keys all differ; the schema then listed every unknown key, and a record carrying them was
// copied whole to a worker. The pass costs ~1.3 ms a MiB. The CLI bounds the arrays and objects
// of the records it reads with the same pass (cli/read-input.ts).

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * `bytes` as UTF-8 text, a leading byte-order mark dropped; a TypeError when they are not UTF-8.
 * Every reader of untrusted text decodes with it: decoded loosely, each bad byte became U+FFFD,
 * and the text was another than the one sent (a record's seed named another session).
 */
export function utf8Text(bytes: Uint8Array): string {
  return strictUtf8.decode(bytes);
}

/**
 * Arrays and objects a request may hold, per byte of the message limit (65,536 at the default
 * 1 MiB). Real requests hold one per 20 bytes or more (a record's actions ~33 bytes each, a
 * policy.act row kilobytes), so only padding meets it.
 */
export const BYTES_PER_CONTAINER = 16;

/**
 * The most keys an object in a request may have: requests are objects of a few fields (a rule
 * set has 14), and so is every object of a record; an object of more is padding (a record's
 * unknown fields are ignored, but not parsed at any size).
 */
export const MAX_REQUEST_OBJECT_KEYS = 64;

/**
 * The most different key names a request may use: a request with a record uses fewer than 100,
 * where objects of keys all different cost the parser 70-190 ms a MiB (each a new object shape)
 * and the same within 256 names ~20 ms at most.
 */
export const MAX_KEY_NAMES = 256;

/** Why a frame is refused unread, and where. */
export interface ScanProblem {
  limit: 'maxContainers' | 'maxKeys' | 'maxKeyNames';
  /** The dotted path of the object holding the key that passed a bound (`params.config`, `params.record.hands[2]`), '' for the root. */
  field: string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

// What each byte is to the scan; 0 for every byte it passes over (digits, letters, commas, space).
const STARTS_STRING = 1;
const OPENS = 2;
const CLOSES = 3;
const ENDS_KEY = 4;
const KIND = new Uint8Array(256);
KIND[QUOTE] = STARTS_STRING;
KIND[OPEN_OBJECT] = OPENS;
KIND[OPEN_ARRAY] = OPENS;
KIND[CLOSE_OBJECT] = CLOSES;
KIND[CLOSE_ARRAY] = CLOSES;
KIND[COLON] = ENDS_KEY;

/**
 * Per open array or object: -1 for an array, an object's count of keys so far; shared by every
 * scan (one runs at a time) and at most maxContainers long. A plain array of 60,000 open
 * brackets made the pass five times slower.
 */
let openScratch = new Int32Array(1024);

/**
 * The start of both scans' key hashes: secret to this process, so that keys sharing a hash cannot
 * be worked out offline (with the fixed FNV-1a start, 64 keys of one hash took under a second to
 * find, and each comparison of them cost the scan an allocation), and hashes are only ever a
 * shortcut: every match is confirmed on the keys themselves.
 */
let HASH_START = crypto.getRandomValues(new Int32Array(1))[0]! | 0;
/** Keys decoded to confirm a hash match (tests read it: the scans must not decode per match). */
let keysDecoded = 0;

/**
 * For tests: sets the hash start (so that keys sharing a hash can be made) and returns the hash
 * of a key written without escapes, and the count of keys decoded so far.
 */
export const keyHashesForTests = {
  start(value: number): void {
    HASH_START = value | 0;
  },
  hash(key: string): number {
    const bytes = Buffer.from(`"${key}"`, 'utf8');
    return decodedKeyHash(bytes, 0, bytes.length - 1);
  },
  get keysDecoded(): number {
    return keysDecoded;
  },
};

/** One byte into a key hash: FNV-1a, with the high bits folded back (plain FNV-1a's low bits depend on the low bits alone). */
function mixByte(hash: number, byte: number): number {
  const h = Math.imul(hash ^ byte, 0x01000193);
  return h ^ (h >>> 15);
}

/** Whether the raw bytes between the quotes at (aStart, aEnd) and (bStart, bEnd) are the same. */
function sameBytes(bytes: Uint8Array, aStart: number, aEnd: number, bStart: number, bEnd: number): boolean {
  if (aEnd - aStart !== bEnd - bStart) return false;
  for (let i = 1; i < aEnd - aStart; i++) if (bytes[aStart + i] !== bytes[bStart + i]) return false;
  return true;
}

/**
 * The key names met in a scan, as hashes in an open-addressing table four times the bound (0:
 * empty) with where each name stands, and the slots to clear after it. Names are compared as
 * written (an escaped spelling of a name counts apart, which only counts it more strictly).
 */
const NAME_SLOTS = 4 * MAX_KEY_NAMES;
const nameTable = new Int32Array(NAME_SLOTS);
const nameStart = new Int32Array(NAME_SLOTS);
const nameEnd = new Int32Array(NAME_SLOTS);
const usedSlots = new Int32Array(MAX_KEY_NAMES + 1);
let numNames = 0;

/** Notes the key name in bytes (start, end) (its quotes); false once it is the one past `max` different names. */
function noteKeyName(bytes: Uint8Array, start: number, end: number, max: number): boolean {
  let hash = HASH_START;
  for (let i = start + 1; i < end; i++) hash = mixByte(hash, bytes[i]!);
  hash |= 1;
  let slot = hash & (NAME_SLOTS - 1);
  for (let seen = nameTable[slot]!; seen !== 0; seen = nameTable[slot]!) {
    // Counted by hash alone, names sharing one passed as a single name, past the bound.
    if (seen === hash && sameBytes(bytes, nameStart[slot]!, nameEnd[slot]!, start, end)) return true;
    slot = (slot + 1) & (NAME_SLOTS - 1);
  }
  if (numNames === max) return false;
  nameTable[slot] = hash;
  nameStart[slot] = start;
  nameEnd[slot] = end;
  usedSlots[numNames++] = slot;
  return true;
}

/**
 * Null when `bytes` holds at most `maxContainers` arrays and objects (outside strings), no object
 * of more than `maxKeys` keys and at most `maxKeyNames` different key names (at most
 * MAX_KEY_NAMES; Infinity: names are not counted); else what it passes first. Not a JSON check:
 * malformed text is left to the parser (an unbalanced bracket only stops the count of keys).
 */
export function scanFrame(bytes: Uint8Array, maxContainers: number, maxKeys: number, maxKeyNames = MAX_KEY_NAMES): ScanProblem | null {
  const problem = scan(bytes, maxContainers, maxKeys, maxKeyNames === Infinity ? Infinity : Math.min(maxKeyNames, MAX_KEY_NAMES));
  for (let k = 0; k < numNames; k++) nameTable[usedSlots[k]!] = 0;
  numNames = 0;
  return problem;
}

function scan(bytes: Uint8Array, maxContainers: number, maxKeys: number, maxKeyNames: number): ScanProblem | null {
  // Only keys need the stack of open brackets: a count of containers alone keeps none (the CLI's
  // bound on a 256 MB record would otherwise grow it with the nesting).
  const countsKeys = maxKeys !== Infinity || maxKeyNames !== Infinity;
  let keys = openScratch;
  let top = -1;
  let containers = 0;
  let stringStart = 0;
  let stringEnd = 0;
  for (let i = 0; i < bytes.length; i++) {
    const kind = KIND[bytes[i]!]!;
    if (kind === 0) continue;
    if (kind === STARTS_STRING) {
      stringStart = i;
      // closingQuote inline: called here, it made the whole pass three times slower (4.2 ms a MiB).
      for (i++; i < bytes.length; i++) {
        const c = bytes[i]!;
        if (c === BACKSLASH) i++;
        else if (c === QUOTE) break;
      }
      stringEnd = i;
    } else if (kind === OPENS) {
      if (++containers > maxContainers) return { limit: 'maxContainers', field: '' };
      if (!countsKeys) continue;
      if (++top === keys.length) openScratch = keys = grown(keys);
      keys[top] = bytes[i] === OPEN_OBJECT ? 0 : -1;
    } else if (!countsKeys) continue;
    else if (kind === CLOSES) {
      if (top >= 0) top--;
    } else if (top >= 0 && keys[top]! >= 0) {
      if (++keys[top]! > maxKeys) return { limit: 'maxKeys', field: pathAt(bytes, i) };
      if (maxKeyNames !== Infinity && !noteKeyName(bytes, stringStart, stringEnd, maxKeyNames)) return { limit: 'maxKeyNames', field: pathAt(bytes, i) };
    }
  }
  return null;
}

/** Where the string whose opening quote is at `open` ends: its closing quote, or `end` if none comes first. */
function closingQuote(bytes: Uint8Array, open: number, end: number): number {
  for (let i = open + 1; i < end; i++) {
    const c = bytes[i]!;
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i;
  }
  return end;
}

/** An array or object open at some point of the second pass. */
interface Level {
  isObject: boolean;
  /** Arrays: the index of the element being read (commas so far). */
  index: number;
  /** Objects: the quotes of the key being read. */
  keyStart: number;
  keyEnd: number;
}

/**
 * The path of the object open at byte `end` (a second, slower pass, for the message only): its
 * parents' current keys, and for arrays the index of the element being read.
 */
function pathAt(bytes: Uint8Array, end: number): string {
  const levels: Level[] = [];
  let stringStart = 0;
  let stringEnd = 0;
  for (let i = 0; i < end; i++) {
    const c = bytes[i]!;
    const kind = KIND[c]!;
    const top = levels[levels.length - 1];
    if (kind === STARTS_STRING) {
      stringStart = i;
      i = stringEnd = closingQuote(bytes, i, end);
    } else if (kind === OPENS) levels.push({ isObject: c === OPEN_OBJECT, index: 0, keyStart: 0, keyEnd: 0 });
    else if (kind === CLOSES) levels.pop();
    else if (kind === ENDS_KEY && top?.isObject) [top.keyStart, top.keyEnd] = [stringStart, stringEnd];
    else if (c === COMMA && top && !top.isObject) top.index++;
  }
  let field = '';
  for (const level of levels.slice(0, -1)) {
    if (!level.isObject) field += `[${level.index}]`;
    else {
      const key = keyText(bytes, level.keyStart, level.keyEnd);
      field = field ? `${field}.${key}` : key;
    }
  }
  return field;
}

/** The key whose quotes stand at `start` and `end`, decoded (at most 64 characters). */
function keyText(bytes: Uint8Array, start: number, end: number): string {
  const raw = Buffer.from(bytes.buffer, bytes.byteOffset + start, Math.min(end + 1 - start, 1024)).toString('utf8');
  try {
    return String(JSON.parse(raw.endsWith('"') ? raw : `${raw}"`)).slice(0, 64);
  } catch {
    return raw.slice(1, 65);
  }
}

/** A key that an object gives twice: where (`field`, the dotted path), and the key itself. */
export interface RepeatedKey {
  /** `rules.exchange`, `hands[3].actions[0].seat`: the path of the key (its parents cut at 64 characters each). */
  field: string;
  /** The key, decoded (at most 64 characters; it may hold dots). */
  key: string;
}

/**
 * The keys of the objects open in duplicateKeyAt, a stack (an object's keys sit above its
 * parent's and go when it closes): the hash of each decoded key and where its quotes stand. A new
 * key is compared with its object's keys by hash, a match confirmed on the keys themselves; an
 * object of more than LINEAR_KEYS keys (a record's, never a request's) gets a Set of its decoded
 * keys instead. The scan kept a Set of decoded strings per object: 35-45 ms a MiB of small
 * objects, which a client could send again and again on the thread that answers everyone.
 */
const LINEAR_KEYS = 64;
let keyHash = new Int32Array(1024);
let keyStart = new Int32Array(1024);
let keyEnd = new Int32Array(1024);
/** Per open array (-1) or object (where its keys begin in the stack). */
let openBase = new Int32Array(1024);

function grown(a: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const bigger = new Int32Array(2 * a.length);
  bigger.set(a);
  return bigger;
}

const HEX = new Int8Array(256).fill(-1);
for (let d = 0; d < 10; d++) HEX[0x30 + d] = d;
for (let d = 0; d < 6; d++) HEX[0x41 + d] = HEX[0x61 + d] = 10 + d;
const ESCAPED = new Int32Array(256).fill(-1);
for (const [c, v] of [['"', 0x22], ['\\', 0x5c], ['/', 0x2f], ['b', 8], ['f', 12], ['n', 10], ['r', 13], ['t', 9]] as const) ESCAPED[c.charCodeAt(0)] = v;

/** The hash of the key between the quotes at `start` and `end` as UTF-8 of its decoded text, however it is escaped. */
function decodedKeyHash(bytes: Uint8Array, start: number, end: number): number {
  let hash = HASH_START;
  for (let i = start + 1; i < end; i++) {
    const c = bytes[i]!;
    if (c !== BACKSLASH) {
      hash = mixByte(hash, c);
      continue;
    }
    const e = bytes[++i]!;
    let code = ESCAPED[e]!;
    if (code < 0) {
      // \uXXXX (the text parsed as JSON, so the escape is well formed), a surrogate pair joined.
      code = hex4(bytes, i + 1);
      i += 4;
      if (code >= 0xd800 && code < 0xdc00 && bytes[i + 1] === BACKSLASH && bytes[i + 2] === 0x75) {
        const low = hex4(bytes, i + 3);
        if (low >= 0xdc00 && low < 0xe000) {
          code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
          i += 6;
        }
      }
    }
    // UTF-8 of the code point (a lone surrogate as its three bytes: raw text cannot hold one).
    if (code < 0x80) hash = mixByte(hash, code);
    else if (code < 0x800) hash = mixByte(mixByte(hash, 0xc0 | (code >> 6)), 0x80 | (code & 63));
    else if (code < 0x10000) hash = mixByte(mixByte(mixByte(hash, 0xe0 | (code >> 12)), 0x80 | ((code >> 6) & 63)), 0x80 | (code & 63));
    else hash = mixByte(mixByte(mixByte(mixByte(hash, 0xf0 | (code >> 18)), 0x80 | ((code >> 12) & 63)), 0x80 | ((code >> 6) & 63)), 0x80 | (code & 63));
  }
  return hash;
}

function hex4(bytes: Uint8Array, at: number): number {
  return (HEX[bytes[at]!]! << 12) | (HEX[bytes[at + 1]!]! << 8) | (HEX[bytes[at + 2]!]! << 4) | HEX[bytes[at + 3]!]!;
}

/** The key between the quotes at `start` and `end`, decoded whole. */
function decodedKey(bytes: Uint8Array, start: number, end: number): string {
  keysDecoded++;
  const raw = Buffer.from(bytes.buffer, bytes.byteOffset + start, end + 1 - start).toString('utf8');
  return raw.includes('\\') ? String(JSON.parse(raw)) : raw.slice(1, -1);
}

function hasEscape(bytes: Uint8Array, start: number, end: number): boolean {
  for (let i = start + 1; i < end; i++) if (bytes[i] === BACKSLASH) return true;
  return false;
}

/**
 * How many unlike keys sharing a hash one scan meets before every object's further keys go into
 * a Set (V8's own seeded string hash): hash matches are confirmed at most this often, whatever
 * the keys.
 */
const MAX_ALIKE = 16;

/** Whether the keys at (aStart, aEnd) and (bStart, bEnd), whose hashes match, are the same key decoded. */
function sameKey(bytes: Uint8Array, aStart: number, aEnd: number, bStart: number, bEnd: number): boolean {
  if (sameBytes(bytes, aStart, aEnd, bStart, bEnd)) return true;
  // Spelt differently, they are the same key only through an escape.
  if (!hasEscape(bytes, aStart, aEnd) && !hasEscape(bytes, bStart, bEnd)) return false;
  return decodedKey(bytes, aStart, aEnd) === decodedKey(bytes, bStart, bEnd);
}

/**
 * The first key that an object of `bytes` (JSON, already parsed) gives twice, or null: JSON.parse
 * keeps the last one without a word, so `{"exchange": {...}, "exchange": null}` played without
 * the exchange. Keys are compared decoded (`"a\\u0062"` is `"ab"`): ~10 ms a MiB of 64-key objects.
 */
export function duplicateKeyAt(bytes: Uint8Array): RepeatedKey | null {
  // Per open container, the Set of an object past LINEAR_KEYS keys.
  const bigObjects: (Set<string> | undefined)[] = [];
  // Unlike keys met with a matching hash; past MAX_ALIKE, every object's further keys go into Sets.
  let alike = 0;
  let top = -1;
  let keyTop = 0;
  let stringStart = 0;
  let stringEnd = 0;
  for (let i = 0; i < bytes.length; i++) {
    const kind = KIND[bytes[i]!]!;
    if (kind === 0) continue;
    if (kind === STARTS_STRING) {
      stringStart = i;
      // closingQuote inline, as in scan (a call per string is most of a pass's time).
      for (i++; i < bytes.length; i++) {
        const c = bytes[i]!;
        if (c === BACKSLASH) i++;
        else if (c === QUOTE) break;
      }
      stringEnd = i;
    } else if (kind === OPENS) {
      if (++top === openBase.length) openBase = grown(openBase);
      openBase[top] = bytes[i] === OPEN_OBJECT ? keyTop : -1;
      bigObjects[top] = undefined;
    } else if (kind === CLOSES) {
      if (top >= 0 && openBase[top]! >= 0) keyTop = openBase[top]!;
      if (top >= 0) top--;
    } else if (top >= 0 && openBase[top]! >= 0) {
      const base = openBase[top]!;
      let big = bigObjects[top];
      if (big === undefined && (keyTop - base === LINEAR_KEYS || alike > MAX_ALIKE)) {
        big = bigObjects[top] = new Set();
        for (let k = base; k < keyTop; k++) big.add(decodedKey(bytes, keyStart[k]!, keyEnd[k]!));
      }
      let repeated = false;
      if (big !== undefined) {
        const key = decodedKey(bytes, stringStart, stringEnd);
        repeated = big.has(key);
        big.add(key);
      } else {
        const hash = decodedKeyHash(bytes, stringStart, stringEnd);
        for (let k = base; k < keyTop && !repeated; k++) {
          if (keyHash[k] !== hash) continue;
          repeated = sameKey(bytes, keyStart[k]!, keyEnd[k]!, stringStart, stringEnd);
          if (!repeated) alike++;
        }
        if (keyTop === keyHash.length) [keyHash, keyStart, keyEnd] = [grown(keyHash), grown(keyStart), grown(keyEnd)];
        keyHash[keyTop] = hash;
        keyStart[keyTop] = stringStart;
        keyEnd[keyTop++] = stringEnd;
      }
      if (repeated) {
        // Cut as pathAt cuts the keys above it: a 1 MiB key came back whole in the field and the message.
        const parent = pathAt(bytes, i);
        const cut = decodedKey(bytes, stringStart, stringEnd).slice(0, 64);
        return { field: parent ? `${parent}.${cut}` : cut, key: cut };
      }
    }
  }
  return null;
}

/** The error reason for a key that duplicateKeyAt found (the CLI's and the bridge's). */
export function twiceReason(key: string): string {
  return `${JSON.stringify(key)} is given twice in one object (JSON would keep only the last)`;
}

/** `field: reason` of a repeated key, as the bridge, the CLI and the checkpoint store say it. */
export function repeatedKeyReason(twice: RepeatedKey): string {
  return `${twice.field}: ${twiceReason(twice.key)}`;
}
