// Flags shared by several verbs: agent lists whose agents carry comma-separated options, and
// output folders checked before any work.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseArgs } from 'node:util';
import { agentListFlag, integerFlag, outputFolderFlag, parseArgsErrorField, parseFlags, redisFlag, rulesFromFlags } from './flags.js';
import { repeatedKeyIn } from './read-input.js';

describe('agent lists', () => {
  it('keep an agent\'s key=value options together (pimc:samples=2,rollout=random was split into two agents)', () => {
    expect(agentListFlag('pimc:samples=2,rollout=random,random')).toEqual(['pimc:samples=2,rollout=random', 'random']);
    expect(agentListFlag(' heuristic:caution=1 , runs/a=b/checkpoints,pimc ')).toEqual(['heuristic:caution=1', 'runs/a=b/checkpoints', 'pimc']);
    expect(() => agentListFlag('random,,heuristic')).toThrow(/agents: --agents has an empty entry/);
    expect(() => agentListFlag('', 'opponents')).toThrow(/opponents: --opponents has an empty entry/);
    // A key=value with no agent before it stays an item of its own (and is then an unknown agent).
    expect(agentListFlag('samples=2,random')).toEqual(['samples=2', 'random']);
  });
});

describe('output folders', () => {
  it('refuse an empty path, a file and a path below a file, naming the flag', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kratzen-flags-'));
    const file = join(dir, 'existing.txt');
    writeFileSync(file, 'x');
    for (const path of ['', file, join(file, 'sub')]) expect(() => outputFolderFlag(path, 'out'), path).toThrow(expect.objectContaining({ field: 'out' }));
    expect(outputFolderFlag(join(dir, 'new', 'deeper'), 'out')).toBe(join(dir, 'new', 'deeper'));
    expect(outputFolderFlag(dir, 'out')).toBe(dir);
  });
});

describe('parse errors', () => {
  const errorOf = (args: string[]) => {
    try {
      parseArgs({ args, options: { updates: { type: 'string' }, 'lock-seconds': { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
    } catch (e) {
      return e;
    }
    throw new Error(`${args.join(' ')} parsed`);
  };

  it('name the flag they are about (a negative value after a space named "arguments") [probe round 3]', () => {
    expect(parseArgsErrorField(errorOf(['--updates', '-1']))).toBe('updates');
    expect(parseArgsErrorField(errorOf(['--lock-seconds', '-5']))).toBe('lock-seconds');
    expect(parseArgsErrorField(errorOf(['--bogus', '1']))).toBe('bogus');
    expect(parseArgsErrorField(errorOf(['-x']))).toBe('x');
    expect(parseArgsErrorField(errorOf(['stray']))).toBe('arguments');
    // A flag with a short form is named by its long name: --help=1 named "h" [probe, session 41].
    expect(parseArgsErrorField(errorOf(['--help=1']))).toBe('help');
  });

  // "Option '--hands' argument is ambiguous. Did you forget ...": three sentences, no value [CLI probe, session 38].
  it('say which value after a flag reads as a flag, and how to write it', () => {
    const options = { hands: { type: 'string' as const }, seat: { type: 'string' as const, short: 's' } };
    const refusal = (args: string[]) => {
      try {
        parseFlags({ args, options });
      } catch (e) {
        return e as Error & { code?: string };
      }
      throw new Error(`${args.join(' ')} parsed`);
    };
    const long = refusal(['--hands', '-1']);
    expect(long.message).toBe('Option \'--hands\' takes a value, and "-1" after it reads as a flag: write a value starting with "-" as --hands=-1');
    expect([long.code, parseArgsErrorField(long)]).toEqual(['ERR_PARSE_ARGS_INVALID_OPTION_VALUE', 'hands']);
    expect(refusal(['-s', '-2']).message).toBe('Option \'-s\' takes a value, and "-2" after it reads as a flag: write a value starting with "-" as --seat=-2');
    expect(refusal(['--hands', '1', '--bogus']).message).toMatch(/Unknown option '--bogus'/);
  });
});

describe('JSON keys given twice [probe round 6 left]', () => {
  it('are found with their path (JSON.parse keeps the last without a word)', () => {
    expect(repeatedKeyIn('{"exchange":{"maxCards":2},"exchange":null}')).toEqual({ field: 'exchange', key: 'exchange' });
    expect(repeatedKeyIn('{"rules":{"hands":[1,{"x":1,"x":2}]}}')).toEqual({ field: 'rules.hands[1].x', key: 'x' });
    expect(repeatedKeyIn('[{"k":1},{"k":2,"k":3}]')).toEqual({ field: '[1].k', key: 'k' });
    // Escapes are decoded before keys are compared; strings holding quotes, commas and braces are skipped whole.
    expect(repeatedKeyIn('{"a\\u0062":1,"ab":2}')?.field).toBe('ab');
    expect(repeatedKeyIn('{"s":"x,\\"{[y\\\\","t":1,"s":0}')?.field).toBe('s');
    // The same key in different objects, or a value equal to a key, is not a duplicate.
    for (const text of ['{"a":1,"b":{"a":2}}', '{"a":"b","b":"a"}', '[{"a":1},{"a":1}]', '{"a":[[],[{"b":[]}]],"c":{"d":1},"d":1}', '{}', '[]', '3']) {
      expect(repeatedKeyIn(text), text).toBe(null);
    }
  });

  it('are refused in --variant, naming the key', () => {
    expect(() => rulesFromFlags({ variant: '{"profile":"tavern5","exchange":{"maxCards":2,"feePerCard":1},"exchange":null}' })).toThrow(
      expect.objectContaining({ field: 'variant', reason: '--variant: exchange: "exchange" is given twice in one object (JSON would keep only the last)' }),
    );
    // A nested key is named as the key, its path apart (the path was quoted as if it were the key).
    expect(() => rulesFromFlags({ variant: '{"profile":"tavern5","exchange":{"maxCards":2,"maxCards":3}}' })).toThrow(
      expect.objectContaining({ reason: '--variant: exchange.maxCards: "maxCards" is given twice in one object (JSON would keep only the last)' }),
    );
  });
});

describe('integer flags', () => {
  it('refuse integers past 2^53 - 1 quoting them as given (9007199254740993 was read, and echoed, as ...992) [probe round 6 left]', () => {
    expect(integerFlag('9007199254740991', 'hands')).toBe(9007199254740991);
    for (const value of ['9007199254740993', '-9007199254740993', '1'.repeat(400)]) {
      expect(() => integerFlag(value, 'hands'), value).toThrow(expect.objectContaining({ field: 'hands', reason: expect.stringContaining(`--hands ${JSON.stringify(value).slice(0, 20)}`) }));
    }
  });
});

describe('--variant and the rule flags [probe round 8]', () => {
  it('refuse naming one field two ways (the flag won without a word), and take it named alike', () => {
    expect(() => rulesFromFlags({ variant: '{"players":5}', players: '4' })).toThrow(expect.objectContaining({ field: 'players', reason: '--players 4 and --variant\'s players 5 differ: give it once' }));
    // 1e400 is Infinity, which JSON writes as null [probe, session 47].
    expect(() => rulesFromFlags({ variant: '{"hands":1e400}', hands: '1' })).toThrow(expect.objectContaining({ field: 'hands', reason: '--hands 1 and --variant\'s hands Infinity differ: give it once' }));
    expect(() => rulesFromFlags({ variant: '{"profile":"tavern5"}', profile: 'didactic4' })).toThrow(expect.objectContaining({ field: 'profile' }));
    expect(rulesFromFlags({ variant: '{"players":4,"hands":2}', players: '4' })).toEqual({ players: 4, hands: 2 });
  });
});

describe('--help past -- [probe round 8]', () => {
  it('is a positional argument there (replay -- --help printed help instead of replaying the file)', async () => {
    const { wantsHelp } = await import('./help.js');
    expect(wantsHelp(['--help'])).toBe(true);
    expect(wantsHelp(['x', '-h'])).toBe(true);
    expect(wantsHelp(['--', '--help'])).toBe(false);
    expect(wantsHelp(['--seed', '1', '--', '-h'])).toBe(false);
  });
});

describe('redisFlag', () => {
  it('takes KRATZEN_REDIS_PASSWORD for a URL without a password; a password in the URL wins; empty is unset', () => {
    expect(redisFlag('redis://h:1', { KRATZEN_REDIS_PASSWORD: 'pw' })).toMatchObject({ host: 'h', port: 1, password: 'pw' });
    expect(redisFlag('redis://:url-pw@h:1', { KRATZEN_REDIS_PASSWORD: 'pw' }).password).toBe('url-pw');
    expect(redisFlag('redis://h:1', { KRATZEN_REDIS_PASSWORD: '' }).password).toBeUndefined();
    expect(redisFlag('redis://h:1', {}).password).toBeUndefined();
  });
});
