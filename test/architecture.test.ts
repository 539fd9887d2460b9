// The layers point one way and the rules core stays closed (docs/architecture.md):
// - only env/rules/ imports the core's private files (its state data and internals);
// - agents/, training/, bridge/ and cli/ never reach for a vector env's rules-core state
//   (`stateOf`, `endedStateOf`): they read it through the env's accessors;
// - the rules core imports nothing outside env/rules/ but zod and seeded seedrandom, and does no I/O, clocks or global randomness;
// - env/ does not import agents/, training/, bridge/ or cli/, and more generally each layer imports
//   only the layers listed before it in ORDER (docs/architecture.md's list);
// - only the training rollout reads the other seats' hands (env/oracle.ts, for the oracle critic).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const LAYERS = ['env', 'agents', 'training', 'bridge', 'checkpoints', 'cli', 'bench'];
/** docs/architecture.md's order: a layer may import those before it; bench/ comes last, after cli/. */
const ORDER: Record<string, number> = { env: 0, agents: 1, checkpoints: 2, training: 3, bridge: 4, cli: 5, bench: 6 };

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== 'node_modules' && name !== 'python' && name !== 'public') out.push(...sources(path));
    } else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) {
      out.push(path);
    }
  }
  return out;
}

const files = LAYERS.flatMap((layer) => sources(join(root, layer))).map((path) => ({ path: relative(root, path), text: readFileSync(path, 'utf8') }));
const importsOf = (text: string) => [...text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((m) => m[1]!);

describe('architecture', () => {
  it('finds the sources', () => {
    expect(files.length).toBeGreaterThan(60);
  });

  it('only env/rules/ imports the core\'s private state (its data, the key to it, the live views of its memory)', () => {
    const offenders = files.filter((f) => !f.path.startsWith('env/rules/') && importsOf(f.text).some((i) => /(^|\/)rules\/(internal|state-data|state-reader)\.js$/.test(i)));
    expect(offenders.map((f) => f.path)).toEqual([]);
    // The live seat view writes into the state's memory: the observation encoder alone reads it.
    const liveReaders = files.filter((f) => !f.path.startsWith('env/rules/') && importsOf(f.text).some((i) => /(^|\/)rules\/seat-view\.js$/.test(i)));
    expect(liveReaders.map((f) => f.path)).toEqual(['env/observation.ts']);
  });

  it('agents, training, bridge and cli do not reach into a vector env\'s state', () => {
    const outer = files.filter((f) => /^(agents|training|bridge|cli)\//.test(f.path));
    expect(outer.filter((f) => /\b(stateOf|endedStateOf)\(/.test(f.text)).map((f) => f.path)).toEqual([]);
  });

  it('only the training rollout reads the other seats\' hands (the oracle critic\'s inputs)', () => {
    const readers = files.filter((f) => !f.path.startsWith('env/') && /\b(writeOtherHands|encodeOtherHands)\(/.test(f.text)).map((f) => f.path);
    expect(readers).toEqual(['training/rollout.ts']);
  });

  it('the rules core imports only itself, zod and seedrandom (seeded generators), and has no I/O, clock or global randomness', () => {
    const core = files.filter((f) => f.path.startsWith('env/rules/'));
    for (const f of core) {
      for (const i of importsOf(f.text)) expect(i === 'zod' || i === 'seedrandom' || i.startsWith('./'), `${f.path} imports ${i}`).toBe(true);
      expect(/\b(Math\.random|Date\.now|performance\.now|process\.|console\.)/.test(f.text), `${f.path} uses a clock, global randomness or I/O`).toBe(false);
    }
  });

  it('env/ does not depend on the layers above it', () => {
    const env = files.filter((f) => f.path.startsWith('env/'));
    for (const f of env) for (const i of importsOf(f.text)) expect(/^\.\.\/(\.\.\/)?(agents|training|bridge|cli|checkpoints)\//.test(i), `${f.path} imports ${i}`).toBe(false);
  });

  it('each layer imports only the layers before it in docs/architecture.md', () => {
    const offenders: string[] = [];
    for (const f of files) {
      const layer = f.path.split('/')[0]!;
      for (const i of importsOf(f.text)) {
        if (!i.startsWith('.')) continue;
        const target = relative(root, resolve(dirname(join(root, f.path)), i)).split('/')[0]!;
        // The package entry re-exports every layer below the command line: cli/ and bench/ may use it.
        if (target === layer || (target === 'index.js' && ORDER[layer]! >= ORDER.cli!)) continue;
        const allowed = target in ORDER && ORDER[target]! < ORDER[layer]!;
        if (!allowed) offenders.push(`${f.path} imports ${i}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
