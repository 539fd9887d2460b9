// `kratzen train` flags: each lands on its config field; a bad value names the flag.
import { describe, expect, it } from 'vitest';
import { trainConfigFromArgs } from './train.js';
import { parseTrainConfig } from '../training/config.js';

describe('kratzen train flags', () => {
  it('map onto the training config, and the config checks them', () => {
    const { config, resume } = trainConfigFromArgs(['--critic', 'oracle', '--initial-policy', 'runs/a/checkpoints', '--lr', '0.0005', '--hidden', '64,32', '--profile', 'tavern5', '--resume']);
    expect(config).toMatchObject({ critic: 'oracle', initialPolicy: 'runs/a/checkpoints', learningRate: 0.0005, hiddenSizes: [64, 32], rules: { profile: 'tavern5' } });
    expect(resume).toBe(true);
    expect(parseTrainConfig(config).critic).toBe('oracle');
    expect(() => parseTrainConfig(trainConfigFromArgs(['--critic', 'psychic']).config)).toThrow(/critic/);
    expect(parseTrainConfig(trainConfigFromArgs(['--critic', 'oracle', '--actors', '2']).config)).toMatchObject({ critic: 'oracle', actors: 2 });
    expect(() => trainConfigFromArgs(['--lr', 'fast'])).toThrow(/lr/);
    // A config that never ends is refused after 16 MiB instead of being read until memory runs out.
    expect(() => trainConfigFromArgs(['--config', '/dev/zero'])).toThrow(expect.objectContaining({ field: 'config', reason: expect.stringMatching(/larger than/) }));
  });
});
