import { NUM_ACTIONS, createGame } from './dist/env/rules/index.js';
const profile = process.argv[2] ?? 'tavern5';
const game = createGame({ profile, players: 4 });
const mask = new Uint8Array(NUM_ACTIONS);
let a = 1; const random = () => { a = (a + 0x6d2b79f5) >>> 0; let t = a; t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
let seed = 0, actions = 0; const t0 = performance.now();
while (performance.now() - t0 < 4000) {
  const state = game.newState({ seed: seed++ });
  while (!state.isTerminal) { state.legalActionMask(mask); state.apply(state.legalActionAt(Math.floor(random() * state.numLegalActions()))); actions++; }
}
console.log(profile, Math.round(actions / 4), 'actions/s');
