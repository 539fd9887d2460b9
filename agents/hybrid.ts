// An agent that routes each decision by phase: one agent for the bidding decisions (declaration,
// trump naming, discards, exchange) and another for trick play. Used as a teacher that spends
// search (pimc) only where a hand's value is decided most.

import { NUM_ACTIONS } from '../env/rules/index.js';
import { OBS_SIZE } from '../env/observation.js';
import { decodeObservation } from '../env/observation-view.js';
import type { Agent } from './agent.js';

export class PhaseRoutedAgent implements Agent {
  readonly name: string;

  constructor(
    private readonly bidding: Agent,
    private readonly play: Agent,
  ) {
    this.name = `${bidding.name}+${play.name}`;
  }

  act(observations: Float32Array, masks: Uint8Array, seats: Int32Array): Int32Array {
    const out = this.play.act(observations, masks, seats);
    const biddingRows: number[] = [];
    for (let i = 0; i < seats.length; i++) {
      let legal = 0;
      for (let a = 0; a < NUM_ACTIONS; a++) legal += masks[i * NUM_ACTIONS + a]!;
      if (legal > 1 && decodeObservation(observations, i * OBS_SIZE).phase !== 'play') biddingRows.push(i);
    }
    if (biddingRows.length === 0) return out;
    const obs = new Float32Array(biddingRows.length * OBS_SIZE);
    const mask = new Uint8Array(biddingRows.length * NUM_ACTIONS);
    const rowSeats = new Int32Array(biddingRows.length);
    biddingRows.forEach((i, k) => {
      obs.set(observations.subarray(i * OBS_SIZE, (i + 1) * OBS_SIZE), k * OBS_SIZE);
      mask.set(masks.subarray(i * NUM_ACTIONS, (i + 1) * NUM_ACTIONS), k * NUM_ACTIONS);
      rowSeats[k] = seats[i]!;
    });
    const chosen = this.bidding.act(obs, mask, rowSeats);
    biddingRows.forEach((i, k) => (out[i] = chosen[k]!));
    return out;
  }
}
