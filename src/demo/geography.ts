// Demo data: countries, cities and currencies (the bootstrap made the main company's own).
import type { DemoContext } from './context.ts';
import { mkDay } from './dates.ts';
import type { Agency } from './model.ts';
import { COUNTRIES, CURRENCIES } from './vocabulary.ts';

export function addGeography(ctx: DemoContext): Pick<Agency, 'countryId' | 'cityIds' | 'currencyId' | 'mainCountryIso' | 'mainCurrencyIso'> {
  const { rngFor, add, audit, mainRow, existingCurrencies, existingCountries } = ctx;
  const rGeo = rngFor('geo');
  const countryId = new Map<string, string>();
  const cityIds = new Map<string, string[]>();
  for (const c of COUNTRIES) {
    const existing = existingCountries.find((r) => r.iso_code === c.iso);
    const id = existing?.id ?? rGeo.uuid();
    countryId.set(c.iso, id);
    if (!existing) add('countries', { id, name: c.name, iso_code: c.iso, external_id: c.iso, ...audit(mkDay(2024, 1, 2), 600, null) });
    const ids: string[] = [];
    for (const city of c.cities) {
      const cid = rGeo.uuid();
      ids.push(cid);
      add('cities', {
        id: cid,
        country_id: id,
        name: city,
        external_id: `CITY-${city.slice(0, 3).toUpperCase()}-${c.iso}`,
        ...audit(mkDay(2024, 1, 2), 610, null),
      });
    }
    cityIds.set(c.iso, ids);
  }
  const currencyId = new Map<string, string>();
  for (const c of CURRENCIES) {
    const existing = existingCurrencies.find((r) => r.iso_code === c.iso);
    const id = existing?.id ?? rGeo.uuid();
    currencyId.set(c.iso, id);
    if (!existing) add('currencies', { id, name: c.name, iso_code: c.iso, symbol: c.symbol, external_id: c.iso, ...audit(mkDay(2024, 1, 2), 620, null) });
  }
  const mainCountryIso = existingCountries.find((r) => r.id === mainRow.country_id)?.iso_code ?? 'PT';
  const mainCurrencyIso = existingCurrencies.find((r) => r.id === mainRow.currency_id)?.iso_code ?? 'EUR';
  return { countryId, cityIds, currencyId, mainCountryIso, mainCurrencyIso };
}
