// Agent specs (`heuristic:caution=1`, `pimc:samples=8,rollout=random`) are hostile input too: a
// bridge client names them. Every malformed option is an error naming the spec; nothing is
// silently ignored or read some other way (a probe found `__proto__=1` ignored, `caution=`
// read as 0, `0x5` as 5 and a repeated option taking the last value).
import { describe, expect, it } from 'vitest';
import { createAgent } from './registry.js';

const context = { rules: { profile: 'didactic4', players: 4 }, seed: 1 };

describe('createAgent', () => {
  it('builds the built-in agents from their specs', async () => {
    for (const spec of ['random', 'heuristic', 'heuristic:caution=0.5', 'heuristic:caution=-2', 'pimc:samples=4,rollout=random']) {
      await expect(createAgent(spec, context), spec).resolves.toBeDefined();
    }
  });

  it.each([
    'random:',
    'heuristic:',
    'heuristic:caution=',
    'heuristic:caution=0x5',
    'heuristic:caution=1,caution=2',
    'heuristic:caution=1=2',
    'heuristic:__proto__=1',
    'pimc:__proto__=1',
    'pimc:constructor=1',
    'pimc:samples=1e1',
    'pimc:samples=Infinity',
    'pimc:samples=4,',
  ])('refuses %s, naming the spec', async (spec) => {
    await expect(createAgent(spec, context)).rejects.toThrow(`agent "${spec}"`);
  });
});
