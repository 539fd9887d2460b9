// Agents: the interface, the baselines and search, and table play.
export * from './agent.js';
export * from './random.js';
export * from './heuristic.js';
export * from './pimc.js';
export * from './play.js';
export * from './registry.js';
export * from './tfjs.js';
export * from './policy-agent.js';
export * from './hybrid.js';
