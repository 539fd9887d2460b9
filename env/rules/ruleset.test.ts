// Rule-set validation (docs/rules.md §0): defaults, and errors that name the field.
import { describe, expect, it } from 'vitest';
import { RuleSetError, createGame, parseRuleSet } from './index.js';

function rejection(input: unknown): { field: string; reason: string } {
  try {
    parseRuleSet(input);
  } catch (e) {
    expect(e).toBeInstanceOf(RuleSetError);
    return { field: (e as RuleSetError).field, reason: (e as RuleSetError).reason };
  }
  throw new Error(`accepted ${JSON.stringify(input)}`);
}

describe('rule sets', () => {
  it('fills in the defaults: didactic4, 4 players, one rotation of dealers', () => {
    const rules = parseRuleSet({});
    expect(rules).toMatchObject({ profile: 'didactic4', players: 4, hands: 4, deckStyle: 'german' });
    expect(parseRuleSet({ players: 6 }).hands).toBe(6);
  });
  it('fills in tavern5 variant defaults: exchange {} and bettler {}', () => {
    const rules = parseRuleSet({ profile: 'tavern5', exchange: {}, bettler: {} });
    expect(rules.exchange).toEqual({ maxCards: 2, feePerCard: 1 });
    expect(rules.bettler).toEqual({ bonus: 2 });
    expect(rules.ante).toBe(1);
    expect(rules.weliRank).toBe('second');
    expect(rules.dealerMinTricks).toBe(2);
    expect(rules.failPenalty).toBe('double-ante');
  });
  it('treats null as absent', () => {
    expect(parseRuleSet({ profile: 'tavern5', exchange: null }).exchange).toBeNull();
  });
  it.each([
    [{ players: 2 }, 'players'],
    [{ players: 7 }, 'players'],
    [{ players: 4.5 }, 'players'],
    [{ hands: 0 }, 'hands'],
    [{ profile: 'tavern6' }, 'profile'],
    [{ deckStyle: 'tarot' }, 'deckStyle'],
    [{ colour: 'red' }, 'colour'],
    [{ profile: 'tavern5', ante: 0 }, 'ante'],
    [{ profile: 'tavern5', ante: 0.3 }, 'ante'],
    [{ profile: 'tavern5', weliRank: 'third' }, 'weliRank'],
    [{ profile: 'tavern5', dealerMinTricks: 4 }, 'dealerMinTricks'],
    [{ profile: 'tavern5', failPenalty: 'triple' }, 'failPenalty'],
    [{ profile: 'tavern5', exchange: { maxCards: 6 } }, 'exchange.maxCards'],
    [{ profile: 'tavern5', exchange: { maxCards: 0 } }, 'exchange.maxCards'],
    [{ profile: 'tavern5', exchange: { feePerCard: -1 } }, 'exchange.feePerCard'],
    [{ profile: 'tavern5', exchange: { cards: 2 } }, 'exchange.cards'],
    [{ profile: 'tavern5', bettler: { bonus: -0.2 } }, 'bettler.bonus'],
    [{ profile: 'tavern5', startingChips: 0 }, 'startingChips'],
    [{ profile: 'tavern5', targetChips: -5 }, 'targetChips'],
    [{ profile: 'tavern5', targetChips: 10.1 }, 'targetChips'],
  ])('rejects %j naming %s', (input, field) => {
    expect(rejection(input).field).toBe(field);
  });
  it('says which values a field with a few allowed ones takes (§0: dealerMinTricks is 2 or 3; it said "Invalid input") [probe, session 47]', () => {
    for (const dealerMinTricks of [1, 4, '3']) expect(rejection({ profile: 'tavern5', dealerMinTricks })).toEqual({ field: 'dealerMinTricks', reason: 'Invalid option: expected one of 2|3' });
    expect(rejection({ profile: 'tavern5', weliRank: 'third' }).reason).toMatch(/^Invalid option: expected one of /);
  });
  it('accepts amounts in fifths of a chip', () => {
    expect(parseRuleSet({ profile: 'tavern5', ante: 0.2, bettler: { bonus: 1.4 } }).ante).toBe(0.2);
    expect(parseRuleSet({ profile: 'tavern5', ante: 0.6, startingChips: 123456789.4 }).startingChips).toBe(123456789.4);
  });
  it('refuses amounts near a fifth instead of rounding them (nothing is ever rounded, §3)', () => {
    for (const ante of [0.200000000000001, 1e-300, 4e-17]) expect(rejection({ profile: 'tavern5', ante }).field).toBe('ante');
  });
  it('refuses a __proto__ key as an unknown field (§0: unknown fields are rejected); its contents were read as rules', () => {
    expect(rejection(JSON.parse('{"__proto__":{"players":5}}'))).toEqual({ field: '__proto__', reason: 'unknown field __proto__' });
    expect(rejection(JSON.parse('{"profile":"tavern5","exchange":{"__proto__":{"maxCards":1}}}')).field).toBe('exchange.__proto__');
  });
  it.each(['ante', 'weliRank', 'dealerMinTricks', 'failPenalty', 'exchange', 'bettler', 'startingChips', 'targetChips'])(
    'rejects the tavern5 field %s in didactic4',
    (field) => {
      const values: Record<string, unknown> = {
        ante: 1, weliRank: 'highest', dealerMinTricks: 3, failPenalty: 'pot', exchange: {}, bettler: {}, startingChips: 10, targetChips: 20,
      };
      const r = rejection({ profile: 'didactic4', [field]: values[field] });
      expect(r.field).toBe(field);
      expect(r.reason).toMatch(/tavern5/);
    },
  );
  it.each(['dealerChoice', 'cutRitual'])('always rejects %s with the reason from docs/rules.md §0', (field) => {
    for (const profile of ['didactic4', 'tavern5']) {
      const r = rejection({ profile, [field]: 'Schlagen' });
      expect(r.field).toBe(field);
      expect(r.reason).toBe(
        'Schlagen/Oder/Weiter-Oder/Weiter and the cut rituals are named but not defined by the sources ' +
          '(seed 001, section 07: names alone do not define a procedure)',
      );
    }
  });
  it('names a few unknown keys and counts the rest, also nested ones; a null one is absent (§0)', () => {
    const many = Object.fromEntries(Array.from({ length: 30_000 }, (_, i) => [`k${i}`, i]));
    expect(rejection({ players: 4, ...many })).toEqual({ field: 'k0', reason: 'unknown fields k0, k1, k2, k3, k4, k5, k6, k7 and 29992 more' });
    expect(rejection({ profile: 'tavern5', bettler: { bonus: 2, ...many } })).toEqual({ field: 'bettler.k0', reason: expect.stringMatching(/^unknown fields k0, .* and 29992 more$/) });
    expect(rejection({ profile: 'tavern5', exchange: { maxCard: 2 } })).toEqual({ field: 'exchange.maxCard', reason: 'unknown field maxCard' });
    expect(parseRuleSet({ players: 5, nothing: null }).players).toBe(5);
  });
  it('rejects what is not an object', () => {
    expect(rejection([]).field).toBe('');
    expect(rejection('didactic4').field).toBe('');
  });
  it('refuses deep nesting with the field instead of overflowing the stack (hostile input)', () => {
    const deep = JSON.parse(`${'{"exchange":{"maxCards":'.repeat(25_000)}1${'}}'.repeat(25_000)}`);
    expect(rejection(deep)).toEqual({ field: 'exchange.maxCards.exchange.maxCards', reason: expect.stringContaining('nested more than 4 levels') });
    // An unknown key is refused before any recursion, at whatever depth its value goes on.
    expect(rejection(JSON.parse(`${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`))).toEqual({ field: 'a', reason: 'unknown field a' });
    expect(rejection({ profile: 'tavern5', exchange: { maxCards: { x: { y: { z: 1 } } } } }).field).toBe('exchange.maxCards.x.y');
    expect(rejection({ profile: 'tavern5', exchange: { maxCards: { x: 1 } } }).field).toBe('exchange.maxCards');
    expect(parseRuleSet({ profile: 'tavern5', exchange: { maxCards: 3, feePerCard: null } }).exchange).toEqual({ maxCards: 3, feePerCard: 1 });
  });
});

describe('values the core took as other values [probe round 8]', () => {
  it('refuses deck entries that are not integer card ids, start.muss and pauseBetweenHands that are not booleans, and a seat off the table in explainIllegal', () => {
    const game = createGame({ profile: 'tavern5', players: 4 });
    const deck = Array.from({ length: 33 }, (_, c) => c);
    for (const bad of [0.5, '7']) {
      const decks = [[bad, ...deck.slice(1)]];
      expect(() => game.newState({ decks: decks as never }), String(bad)).toThrow(/invalid deck: decks\[0\]: a deck lists each of the 33 card ids once/);
    }
    for (const muss of ['yes', 0]) expect(() => game.newState({ seed: 1, start: { muss } as never }), String(muss)).toThrow(/start.muss must be true or false/);
    expect(() => game.newState({ seed: 1, pauseBetweenHands: 'no' as never })).toThrow(/pauseBetweenHands must be true or false/);
    const state = game.newState({ seed: 1 });
    for (const seat of [99, -5, '1']) expect(() => state.explainIllegal(0, seat as never), String(seat)).toThrow(/seat/);
    expect(state.explainIllegal(0, (state.currentSeat + 1) % 4)).toMatch(/^it is seat \d's turn/);
  });
});
