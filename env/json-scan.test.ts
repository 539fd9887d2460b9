// The checks of JSON text before and after it is parsed (json-scan.ts) [hostile input: padding, repeated keys].
import { describe, expect, it } from 'vitest';
import { duplicateKeyAt, scanFrame } from './json-scan.js';

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
