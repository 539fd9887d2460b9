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
 * The key names met in a scan, as hashes in an open-addressing table four times the bound (0:
 * empty; a collision only lets a name pass as one met before), and the slots to clear after it.
 */
const NAME_SLOTS = 4 * MAX_KEY_NAMES;
const nameTable = new Int32Array(NAME_SLOTS);
const usedSlots = new Int32Array(MAX_KEY_NAMES + 1);
let numNames = 0;

/** Notes the key name in bytes (start, end) (its quotes); false once it is the one past `max` different names. */
function noteKeyName(bytes: Uint8Array, start: number, end: number, max: number): boolean {
  let hash = 0x811c9dc5;
  for (let i = start + 1; i < end; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
  hash |= 1;
  let slot = hash & (NAME_SLOTS - 1);
  for (let seen = nameTable[slot]!; seen !== 0; seen = nameTable[slot]!) {
    if (seen === hash) return true;
    slot = (slot + 1) & (NAME_SLOTS - 1);
  }
  if (numNames === max) return false;
  nameTable[slot] = hash;
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
      if (++top === keys.length) {
        const grown = new Int32Array(2 * keys.length);
        grown.set(keys);
        openScratch = keys = grown;
      }
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
 * The first key that an object of `bytes` (JSON, already parsed) gives twice, or null: JSON.parse
 * keeps the last one without a word, so `{"exchange": {...}, "exchange": null}` played without
 * the exchange. Keys are compared decoded (`"a\\u0062"` is `"ab"`).
 */
export function duplicateKeyAt(bytes: Uint8Array): RepeatedKey | null {
  // Per open array (null) or object (its keys so far).
  const open: (Set<string> | null)[] = [];
  let stringStart = 0;
  let stringEnd = 0;
  for (let i = 0; i < bytes.length; i++) {
    const kind = KIND[bytes[i]!]!;
    if (kind === STARTS_STRING) {
      stringStart = i;
      i = stringEnd = closingQuote(bytes, i, bytes.length);
    } else if (kind === OPENS) open.push(bytes[i] === OPEN_OBJECT ? new Set() : null);
    else if (kind === CLOSES) open.pop();
    else if (kind === ENDS_KEY) {
      const keys = open[open.length - 1];
      if (!keys) continue;
      const raw = Buffer.from(bytes.buffer, bytes.byteOffset + stringStart, stringEnd + 1 - stringStart).toString('utf8');
      const key = raw.includes('\\') ? String(JSON.parse(raw)) : raw.slice(1, -1);
      if (keys.has(key)) {
        // Cut as pathAt cuts the keys above it: a 1 MiB key came back whole in the field and the message.
        const parent = pathAt(bytes, i);
        const cut = key.slice(0, 64);
        return { field: parent ? `${parent}.${cut}` : cut, key: cut };
      }
      keys.add(key);
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
