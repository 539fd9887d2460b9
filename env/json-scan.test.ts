// The checks of JSON text before and after it is parsed (json-scan.ts) [hostile input: padding, repeated keys].
import { describe, expect, it } from 'vitest';
import { duplicateKeyAt, keyHashesForTests, scanFrame } from './json-scan.js';

const scan = (text: string, maxContainers = 1000, maxKeys = 3) => scanFrame(Buffer.from(text), maxContainers, maxKeys);
const crowd = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',')}}`;

describe('scanFrame', () => {
  it('counts arrays and objects up to the bound, brackets in strings not counted', () => {
    expect(scan('[[],{},[[]]]', 5)).toBeNull();
    expect(scan('[[],{},[[]],{}]', 5)).toEqual({ limit: 'maxContainers', field: '' });
    expect(scan('["[[[[[["]', 1)).toBeNull();
  });

  it('names the first object of more keys than the bound by its path, keys in strings not counted', () => {
    expect(scan(crowd(3))).toBeNull();
    expect(scan(crowd(4))).toEqual({ limit: 'maxKeys', field: '' });
    // A string value before the key does not stand in for it; array indices are counted by commas.
    expect(scan(`{"a":"x","b":[1,{"c":"d"},[2,"e",${crowd(4)}]]}`)).toEqual({ limit: 'maxKeys', field: 'b[2][2]' });
    expect(scan(`{"s":"\\"k0\\":1,\\"k1\\":1,\\"k2\\":1,\\"k3\\":1"}`)).toBeNull();
    // Keys are decoded as JSON strings; a long one is cut to 64 characters.
    expect(scan(`{"p\\u00e4\\"r":${crowd(4)}}`)).toEqual({ limit: 'maxKeys', field: 'pä"r' });
    expect(scan(`{"${'x'.repeat(100)}":${crowd(4)}}`)!.field).toBe('x'.repeat(64));
  });

  it('refuses the key name past the bound of different names, by the path of its object; names met again are free', () => {
    const objects = (names: number, perObject: number) =>
      `{"a":[${Array.from({ length: names / perObject }, (_, j) => `{${Array.from({ length: perObject }, (_, i) => `"n${j * perObject + i}":0`).join(',')}}`).join(',')}]}`;
    // "a" and 255 more: 256 names.
    expect(scanFrame(Buffer.from(objects(255, 3)), 1e6, 64, 256)).toBeNull();
    expect(scanFrame(Buffer.from(objects(258, 3)), 1e6, 64, 256)).toEqual({ limit: 'maxKeyNames', field: 'a[85]' });
    const repeated = `[${Array(5000).fill('{"seat":0,"action":"play Ah"}').join(',')}]`;
    expect(scanFrame(Buffer.from(repeated), 1e6, 64, 2)).toBeNull();
    // The names of one scan are gone by the next.
    expect(scanFrame(Buffer.from(objects(240, 3)), 1e6, 64, 256)).toBeNull();
    expect(scanFrame(Buffer.from(objects(240, 3).replaceAll('"n', '"m')), 1e6, 64, 256)).toBeNull();
  });

  it('leaves malformed text to the parser without throwing', () => {
    for (const text of ['}}]]', '{"a":', '"open', '{"a\\', '[[[[', '::::', '']) expect(() => scan(text)).not.toThrow();
  });
});

describe('duplicateKeyAt', () => {
  const twice = (text: string) => duplicateKeyAt(Buffer.from(text));

  it('names the first key an object gives twice by its path, and the key apart (it may hold dots)', () => {
    expect(twice('{"a":1,"b":{"a":2}}')).toBeNull();
    expect(twice('{"a":1,"b":{"c":2,"c":3}}')).toEqual({ field: 'b.c', key: 'c' });
    expect(twice('{"rules":{"x.y":1,"x.y":2}}')).toEqual({ field: 'rules.x.y', key: 'x.y' });
    expect(twice('[{"k":1},{"k":2,"k":3}]')).toEqual({ field: '[1].k', key: 'k' });
    // Compared decoded; a long key is cut to 64 characters in both.
    expect(twice('{"a\\u0062":1,"ab":2}')).toEqual({ field: 'ab', key: 'ab' });
    const long = 'k'.repeat(100);
    expect(twice(`{"${long}":1,"${long}":2}`)).toEqual({ field: 'k'.repeat(64), key: 'k'.repeat(64) });
  });
});

describe('duplicateKeyAt against a plain reading of the objects [bridge probe, session 39]', () => {
  /** The first repeated key of `value`'s objects in text order, as the Set-per-object scan found it. */
  const reference = (text: string): string | null => {
    let found: string | null = null;
    // A tiny recursive reader of the text, each key decoded by JSON.parse.
    let i = 0;
    const ws = () => {
      while (/\s/.test(text[i] ?? '')) i++;
    };
    const str = (): string => {
      const start = i;
      i++;
      while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      i++;
      return JSON.parse(text.slice(start, i));
    };
    const value = (): void => {
      ws();
      if (text[i] === '{') {
        i++;
        const keys = new Set<string>();
        ws();
        if (text[i] === '}') return void i++;
        for (;;) {
          ws();
          const key = str();
          if (keys.has(key) && found === null) found = key;
          keys.add(key);
          ws();
          i++; // :
          value();
          ws();
          if (text[i++] === '}') return;
        }
      } else if (text[i] === '[') {
        i++;
        ws();
        if (text[i] === ']') return void i++;
        for (;;) {
          value();
          ws();
          if (text[i++] === ']') return;
        }
      } else if (text[i] === '"') str();
      else while (!/[\s,\]}]/.test(text[i] ?? ',')) i++;
    };
    value();
    return found;
  };

  it('finds the same repeated key, however the keys are escaped (\\u, surrogate pairs, raw UTF-8)', () => {
    let state = 7;
    const random = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const spellings: Record<string, string[]> = {
      a: ['a', '\\u0061'],
      é: ['é', '\\u00e9', '\\u00E9'],
      '😀': ['😀', '\\ud83d\\ude00', '\\uD83D\\uDE00'],
      'a"b': ['a\\"b', 'a\\u0022b'],
      '\ud800': ['\\ud800'],
      '\u{10000}': ['\\ud800\\udc00'],
      'x/y': ['x/y', 'x\\/y'],
      'tab\t': ['tab\\t', 'tab\\u0009'],
    };
    const names = Object.keys(spellings);
    const object = (depth: number): string => {
      const n = Math.floor(random() * 5);
      const parts: string[] = [];
      for (let k = 0; k < n; k++) {
        const name = names[Math.floor(random() * names.length)]!;
        const spelt = spellings[name]![Math.floor(random() * spellings[name]!.length)]!;
        const inner = depth < 3 && random() < 0.4 ? (random() < 0.5 ? object(depth + 1) : `[${object(depth + 1)},1]`) : '0';
        parts.push(`"${spelt}":${inner}`);
      }
      return `{${parts.join(',')}}`;
    };
    let repeated = 0;
    for (let trial = 0; trial < 3000; trial++) {
      const text = object(0);
      const expected = reference(text);
      const got = duplicateKeyAt(Buffer.from(text));
      expect(got?.key ?? null, text).toBe(expected === null ? null : expected.slice(0, 64));
      if (expected !== null) repeated++;
    }
    expect(repeated).toBeGreaterThan(500);
    expect(repeated).toBeLessThan(2900);
  });

  it('keeps no key of one call for the next, and copes with a frame of a hundred thousand keys', () => {
    const many = `[${Array.from({ length: 2000 }, (_, j) => `{${Array.from({ length: 50 }, (_, i) => `"k${i}":${j}`).join(',')}}`).join(',')}]`;
    expect(duplicateKeyAt(Buffer.from(many))).toBeNull();
    expect(duplicateKeyAt(Buffer.from('{"k0":1,"k1":2}'))).toBeNull();
    expect(duplicateKeyAt(Buffer.from(`[${many},{"k7":1,"k\\u0037":2}]`))).toEqual({ field: '[1].k7', key: 'k7' });
  });
});

describe('key hashes are only a shortcut [bridge probe, session 41: keys sharing a hash]', () => {
  // Keys sharing a hash under a known start, found by the birthday bound (a real client cannot:
  // the start is secret to the process). With the fixed FNV-1a start, 64 such keys took under a
  // second to make, counted as one key name, and cost two decodes per comparison.
  keyHashesForTests.start(0x5eed);
  const pairs: [string, string][] = [];
  const seen = new Map<number, string>();
  for (let i = 0; pairs.length < 24; i++) {
    const key = `k${i.toString(36)}`;
    const hash = keyHashesForTests.hash(key);
    const other = seen.get(hash);
    if (other === undefined) seen.set(hash, key);
    else pairs.push([other, key]);
  }

  it('counts key names sharing a hash apart: they passed the bound of different names as one', () => {
    const names = pairs.slice(0, 6).flat();
    const frame = `[${names.map((k) => `{"${k}":0}`).join(',')}]`;
    expect(new Set(names.map((k) => keyHashesForTests.hash(k))).size).toBe(6);
    expect(scanFrame(Buffer.from(frame), 1e6, 64, 12)).toBeNull();
    expect(scanFrame(Buffer.from(frame), 1e6, 64, 11)).toEqual({ limit: 'maxKeyNames', field: '[11]' });
  });

  it('tells unlike keys of one hash apart without decoding them, and stays exact once it stops trusting hashes', () => {
    const objects = pairs.map(([a, b]) => `{"${a}":1,"${b}":2}`);
    const before = keyHashesForTests.keysDecoded;
    expect(duplicateKeyAt(Buffer.from(`[${objects.slice(0, 8).join(',')}]`))).toBeNull();
    expect(keyHashesForTests.keysDecoded).toBe(before);
    // Past 16 such matches in one frame, objects keep Sets of their keys: a repeated key is still
    // found, also when spelt with an escape, and unlike keys still pass.
    expect(duplicateKeyAt(Buffer.from(`[${objects.join(',')}]`))).toBeNull();
    expect(duplicateKeyAt(Buffer.from(`[${objects.join(',')},{"x":1,"y":2,"x":3}]`))).toEqual({ field: '[24].x', key: 'x' });
    expect(duplicateKeyAt(Buffer.from(`[${objects.join(',')},{"ab":1,"a\\u0062":2}]`))).toEqual({ field: '[24].ab', key: 'ab' });
    const [a, b] = pairs[0]!;
    expect(duplicateKeyAt(Buffer.from(`[${objects.join(',')},{"${a}":1,"${b}":2,"${b}":3}]`))).toEqual({ field: `[24].${b}`, key: b });
    // Below the bound too, a key shared with an escaped spelling of it is found.
    const escaped = `\\u${a.charCodeAt(0).toString(16).padStart(4, '0')}${a.slice(1)}`;
    expect(duplicateKeyAt(Buffer.from(`{"${a}":1,"${escaped}":2}`))).toEqual({ field: a, key: a });
  });
});
