// A bill's or purchase order's totals back to lines (DE-Bills, DE-PurchaseOrders show only totals and articles).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { articleNames, linesForTotals, units } from './requests-and-purchasing.ts';

/** The totals PostgreSQL's documentTotals gives these lines: Σ net, Σ round(net × rate / 100, 2) half away from zero. */
function totalsOf(lines: { unit_price: string; vat_id: string | null }[], rates: Record<string, number>): { net: string; vat: string } {
  let net = 0n;
  let vat = 0n;
  for (const l of lines) {
    const n = units(l.unit_price, 4);
    net += n;
    if (l.vat_id) {
      const x = n * BigInt(Math.round(rates[l.vat_id] * 10000));
      const d = 100_000_000n;
      const q = x / d;
      const r = x % d;
      vat += 2n * (r < 0n ? -r : r) >= d ? q + (x < 0n ? -1n : 1n) : q;
    }
  }
  return { net: (Number(net) / 10000).toFixed(4), vat: (Number(vat) / 100).toFixed(2) };
}

describe('linesForTotals', () => {
  const rates = [
    { id: 'std', rate: units('23', 4) },
    { id: 'low', rate: units('6', 4) },
  ];
  const pct = { std: 23, low: 6 };

  test('one line at the rate that gives the VAT shown', () => {
    assert.deepEqual(linesForTotals(rates, '2000.0000', '460.00'), [{ unit_price: '2000.0000', vat_id: 'std' }]);
    assert.deepEqual(linesForTotals(rates, 100, 6), [{ unit_price: '100.0000', vat_id: 'low' }]);
  });

  test('VAT rounded per line, or lines at several rates: a line carrying the VAT and one with the rest, same totals', () => {
    // Three lines of 0.05 at 10 % round to 0.01 each (0.03); 0.15 at 10 % would be 0.02.
    const ten = [{ id: 'ten', rate: units('10', 4) }];
    const lines = linesForTotals(ten, '0.15', '0.03');
    assert.equal(lines.length, 2);
    assert.deepEqual(totalsOf(lines, { ten: 10 }), { net: '0.1500', vat: '0.03' });
    // 1000 at 23 % and 500 at 6 %: 230 + 30.
    const mixed = linesForTotals(rates, '1500', '260');
    assert.equal(mixed.length, 2);
    assert.deepEqual(totalsOf(mixed, pct), { net: '1500.0000', vat: '260.00' });
  });

  test('no VAT: one line without a rate; nothing at all: no line', () => {
    assert.deepEqual(linesForTotals(rates, '99.5', 0), [{ unit_price: '99.5000', vat_id: null }]);
    assert.deepEqual(linesForTotals(rates, 0, 0), []);
  });
});

describe('articleNames', () => {
  test('reads the services back in order, repeats kept, a name holding ", " whole', () => {
    const names = ['Printing', 'Photography', 'Paper, glossy'];
    assert.deepEqual(articleNames(names, 'Printing, Paper, glossy, Printing'), ['Printing', 'Paper, glossy', 'Printing']);
    assert.deepEqual(articleNames(names, null), []);
  });
});
