// How the usage page reads a cost that is partly or wholly unpriced (src/web/usage/format.ts): a
// model without a price is unknown, never free, so a sum with some of it is a floor and a sum of
// only it has no figure.
import { describe, expect, it } from 'vitest';
import { spendText } from '../../src/web/usage/format.ts';

describe('spendText', () => {
  it('a sum with every token priced is its cost, zero included', () => {
    expect(spendText(4.5, 0, 1_100_000)).toBe('$4.50');
    expect(spendText(0, 0, 0)).toBe('$0');
  });

  it('a sum with some tokens unpriced is at least what the priced part cost', () => {
    expect(spendText(7.5, 2_000, 3_302_000)).toBe('at least $7.50');
    expect(spendText(0.003, 1, 2)).toBe('at least $0.0030');
  });

  it('a sum whose every token was unpriced has no figure, not "$0"', () => {
    expect(spendText(0, 650, 650)).toBe('price unknown');
  });
});
