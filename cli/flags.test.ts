// Flags shared by several verbs: agent lists whose agents carry comma-separated options, and
// output folders checked before any work.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseArgs } from 'node:util';
import { agentListFlag, outputFolderFlag, parseArgsErrorField } from './flags.js';

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
  });
});
