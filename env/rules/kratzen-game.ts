// The immutable game: a validated rule set and the sizes and exact amounts derived from it
// (OpenSpiel's Game beside its State), and the options of a new session.

import { NUM_ACTIONS } from './actions.js';
import { parseRuleSet, unitsPerChip, type RuleSet } from './ruleset.js';
import { profileOf, type GameUnits, type ProfileRules } from './profiles.js';
import { KratzenState } from './game.js';
import { checkOptionKeys } from './errors.js';

export interface SessionStart {
  /** First dealer; default: drawn from the seed. */
  dealer?: number;
  /** Pot in units; default 0. */
  pot?: number;
  /** Balances in units; default zeros. */
  balances?: ArrayLike<number>;
  /** tavern5: the first deal is a Muss; default true, the session's opening Muss [D-10]. */
  muss?: boolean;
}

const SESSION_START_FIELDS = Object.keys({ dealer: true, pot: true, balances: true, muss: true } satisfies Record<keyof SessionStart, true>);

export interface NewStateOptions {
  seed?: number | string;
  /** Decks by hand index (33 card ids, top first); a missing one is shuffled from the seed. */
  decks?: ReadonlyArray<ArrayLike<number> | null | undefined>;
  /** Stop in phase `deal` after every hand until `dealNextHand()` (one-hand episodes). */
  pauseBetweenHands?: boolean;
  start?: SessionStart;
}

const NEW_STATE_OPTIONS = Object.keys({ seed: true, decks: true, pauseBetweenHands: true, start: true } satisfies Record<keyof NewStateOptions, true>);

/** The immutable game: a validated rule set and the sizes and exact amounts derived from it. */
export class KratzenGame implements GameUnits {
  readonly rules: RuleSet;
  readonly numPlayers: number;
  readonly numActions = NUM_ACTIONS;
  /** Cards each player holds for play: 4 in didactic4, 5 in tavern5; as many tricks. */
  readonly handSize: number;
  readonly numTricks: number;
  readonly unitsPerChip: number;
  readonly profile: Readonly<ProfileRules>;
  readonly anteUnits: number;
  readonly feeUnits: number;
  readonly bonusUnits: number;
  readonly startingUnits: number;
  readonly targetUnits: number;

  constructor(rules: unknown) {
    this.rules = parseRuleSet(rules);
    this.numPlayers = this.rules.players;
    this.profile = profileOf(this.rules);
    this.handSize = this.profile.handSize;
    this.numTricks = this.handSize;
    this.unitsPerChip = unitsPerChip(this.rules.profile);
    this.anteUnits = this.toUnits(this.rules.ante);
    this.feeUnits = this.toUnits(this.rules.exchange?.feePerCard ?? 0);
    this.bonusUnits = this.toUnits(this.rules.bettler?.bonus ?? 0);
    this.startingUnits = this.toUnits(this.rules.startingChips ?? 0);
    this.targetUnits = this.toUnits(this.rules.targetChips ?? 0);
  }

  newState(options: NewStateOptions = {}): KratzenState {
    // A misspelt option (`start: { dealr: 0 }`, `sed`) was dropped without a word.
    checkOptionKeys(options, NEW_STATE_OPTIONS, 'newState');
    if (options.start !== undefined) checkOptionKeys(options.start, SESSION_START_FIELDS, 'newState start');
    return new KratzenState(this, options);
  }

  toUnits(chips: number): number {
    return Math.round(chips * this.unitsPerChip);
  }

  toChips(units: number): number {
    return units / this.unitsPerChip;
  }
}

export function createGame(rules: unknown = {}): KratzenGame {
  return new KratzenGame(rules);
}

