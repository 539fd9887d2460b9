// The rules core's door to a state's data, for its own modules only (the seat view, the sampler):
// no module outside env/rules/ imports this file (test/architecture.test.ts checks).

import type { KratzenState } from './game.js';
import { STATE_DATA } from './state-reader.js';
import type { StateData } from './state-data.js';
import type { StateReader } from './state-reader.js';

export function internals(state: StateReader): StateData {
  return state[STATE_DATA];
}
