// Trick legality and winners (docs/rules.md §2), written with card tokens.
import { describe, expect, it } from 'vitest';
import seedrandom from 'seedrandom';
import { NUM_CARDS, TRUMP_SUIT, effectiveSuit, isTrump, legalPlayBits, parseCard, suitIndex, trickValue, trickWinnerIndex } from './index.js';

const cards = (tokens: string) => tokens.split(' ').filter(Boolean).map(parseCard);

/** The cards of `hand` that may be played on `trick` (both as token strings). */
function legal(hand: string, trick: string, trump: string, options: { mustHead?: boolean; weliHighest?: boolean } = {}) {
  const h = cards(hand);
  const t = cards(trick);
  const bits = legalPlayBits(h, 0, h.length, t, t.length, suitIndex(trump), options.weliHighest ?? false, options.mustHead ?? true);
  return hand.split(' ').filter((_, i) => bits & (1 << i)).join(' ');
}

function winner(trick: string, trump: string, weliHighest = false) {
  const t = cards(trick);
  return trickWinnerIndex(t, t.length, suitIndex(trump), weliHighest);
}

describe('worked example, seed 001 section 08 (docs/rules.md §2)', () => {
  it('B may play the Weli on a trump lead and must, as it heads the trick', () => {
    expect(legal('W 9h 7s', 'Kc', 'c')).toBe('W');
  });
  it('D holding A and Q of trumps must play the Ace, the only card above the Weli', () => {
    expect(legal('Ac Qc 8h', 'Kc W 8c', 'c')).toBe('Ac');
  });
  it('D wins the trick: the Weli is below the trump Ace', () => {
    expect(winner('Kc W 8c Ac', 'c')).toBe(3);
  });
});

describe('trump order and winners', () => {
  it('orders trumps A, Weli, K, Q, ..., 7', () => {
    expect(winner('Kc W', 'c')).toBe(1);
    expect(winner('W Ac', 'c')).toBe(1);
    expect(winner('7c Ah', 'c')).toBe(0);
  });
  it('weliRank highest puts the Weli above the trump Ace (Salzburg rule)', () => {
    expect(winner('Ac W', 'c', true)).toBe(1);
    expect(legal('Ac 9c', 'W', 'c', { weliHighest: true })).toBe('Ac 9c');
  });
  it('a plain trick goes to the highest card of the suit led', () => {
    expect(winner('9h Ah Kc Th', 's')).toBe(1);
    expect(winner('9h As', 'c')).toBe(0);
  });
  it('the Weli on a Schellen lead is a trump when Schellen is not trump', () => {
    expect(winner('Ad W', 'c')).toBe(1);
  });
});

describe('following (both profiles)', () => {
  it('the Weli does not follow a plain Schellen lead, so a player with Schellen must play it', () => {
    expect(legal('W 7d', 'Kd', 'c')).toBe('7d');
  });
  it('a player with the led suit may not break suit to play the Weli', () => {
    expect(legal('W 7h Ks', 'Ah', 's', { mustHead: false })).toBe('7h');
  });
  it('void in the led suit: must play a trump, and overtrump when the trick holds a lower one', () => {
    expect(legal('9c Jc 8s', 'Ah Tc', 'c')).toBe('Jc');
    expect(legal('9c Jc 8s', 'Ah', 'c')).toBe('9c Jc');
  });
  it('void and unable to overtrump: still any trump', () => {
    expect(legal('9c 7c 8s', 'Ah Jc', 'c')).toBe('9c 7c');
  });
  it('neither the led suit nor a trump: any card', () => {
    expect(legal('9s 7s 8d', 'Ah Jc', 'c')).toBe('9s 7s 8d');
  });
  it('a Weli lead is a trump lead', () => {
    expect(legal('Ac 9h', 'W', 'c')).toBe('Ac');
    expect(legal('9h 8s', 'W', 'c')).toBe('9h 8s');
  });
});

describe('didactic4 must head', () => {
  it('must beat the current winner with the led suit when possible', () => {
    expect(legal('Kh 7h 9s', 'Qh', 'c')).toBe('Kh');
    expect(legal('Jh 7h 9s', 'Qh', 'c')).toBe('Jh 7h');
  });
  it('beats the current winner, not the lead', () => {
    expect(legal('Kh Jh', 'Qh Ah', 'c')).toBe('Kh Jh');
  });
  it('a trump winner on a plain lead leaves any card of the led suit legal', () => {
    expect(legal('Ah 7h', 'Qh 7c', 'c')).toBe('Ah 7h');
  });
  it('on a trump lead it means overtrumping whenever possible', () => {
    expect(legal('Kc 7c', 'Qc', 'c')).toBe('Kc');
  });
});

describe('tavern5 following [D-7]', () => {
  it('following a trump lead, a trump that beats the highest trump is required', () => {
    expect(legal('Kc 7c 9h', 'Qc', 'c', { mustHead: false })).toBe('Kc');
    expect(legal('Ac W 7c', 'Qc Kc', 'c', { mustHead: false })).toBe('Ac W');
    expect(legal('Ac W 7c', 'Qc Kc', 'c', { mustHead: false, weliHighest: true })).toBe('Ac W');
  });
  it('following a trump lead without a trump that beats the highest, any trump', () => {
    expect(legal('Kc 7c 9h', 'Qc Ac', 'c', { mustHead: false })).toBe('Kc 7c');
    expect(legal('Ac 7c', 'W', 'c', { mustHead: false, weliHighest: true })).toBe('Ac 7c');
  });
  it('a Weli lead is a trump lead: the trump Ace must beat it', () => {
    expect(legal('Ac Kc 9h', 'W', 'c', { mustHead: false })).toBe('Ac');
  });
  it('no duty to head a plain suit', () => {
    expect(legal('Kh 7h', 'Qh', 'c', { mustHead: false })).toBe('Kh 7h');
  });
  it('the overtrump duty still binds a player void in the led suit', () => {
    expect(legal('Kc 7c', 'Ah Qc', 'c', { mustHead: false })).toBe('Kc');
  });
});

// legalPlayBits and trickWinnerIndex read tables built from trickValue / effectiveSuit; this
// holds them to the rules written out card by card, over random hands and tricks.
describe('table-driven trick rules agree with trickValue and effectiveSuit [D-7]', () => {
  function referenceBits(hand: number[], trick: number[], trump: number, weliHighest: boolean, mustHead: boolean): number {
    const all = (1 << hand.length) - 1;
    if (trick.length === 0) return all;
    const led = effectiveSuit(trick[0]!, trump);
    const best = Math.max(...trick.map((c) => trickValue(c, led, trump, weliHighest)));
    let follow = 0;
    let beatFollow = 0;
    let trumps = 0;
    let beatTrumps = 0;
    hand.forEach((card, i) => {
      const beats = trickValue(card, led, trump, weliHighest) > best;
      if (effectiveSuit(card, trump) === led) {
        follow |= 1 << i;
        if (beats) beatFollow |= 1 << i;
      }
      if (isTrump(card, trump)) {
        trumps |= 1 << i;
        if (beats) beatTrumps |= 1 << i;
      }
    });
    if (follow !== 0) return (mustHead || led === TRUMP_SUIT) && beatFollow !== 0 ? beatFollow : follow;
    if (trumps !== 0) return beatTrumps !== 0 ? beatTrumps : trumps;
    return all;
  }

  function referenceWinner(trick: number[], trump: number, weliHighest: boolean): number {
    const led = effectiveSuit(trick[0]!, trump);
    let best = 0;
    trick.forEach((card, i) => {
      if (trickValue(card, led, trump, weliHighest) > trickValue(trick[best]!, led, trump, weliHighest)) best = i;
    });
    return best;
  }

  it('on 20,000 random deals of a hand and a trick, every trump (or none) and rule', () => {
    const random = seedrandom('trick-tables');
    for (let round = 0; round < 20_000; round++) {
      const deck = Array.from({ length: NUM_CARDS }, (_, i) => i);
      for (let i = deck.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [deck[i], deck[j]] = [deck[j]!, deck[i]!];
      }
      const hand = deck.slice(0, 1 + Math.floor(random() * 5));
      const trick = deck.slice(5, 5 + Math.floor(random() * 6));
      const trump = Math.floor(random() * 5) - 1;
      const weliHighest = random() < 0.5;
      const mustHead = random() < 0.5;
      expect(legalPlayBits(hand, 0, hand.length, trick, trick.length, trump, weliHighest, mustHead)).toBe(referenceBits(hand, trick, trump, weliHighest, mustHead));
      if (trick.length > 0) expect(trickWinnerIndex(trick, trick.length, trump, weliHighest)).toBe(referenceWinner(trick, trump, weliHighest));
    }
  });
});
