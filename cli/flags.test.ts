// Flags shared by several verbs: agent lists whose agents carry comma-separated options, and
// output folders checked before any work.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentListFlag, outputFolderFlag } from './flags.js';

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
