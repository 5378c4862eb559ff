// Custom table column types (docs/custom-tables.md): their names, and how an input's text becomes
// the JSON value the API takes for each.

export const TYPE_NAMES: Record<number, string> = {
  0: 'Boolean',
  1: 'Date',
  2: 'Float',
  3: 'Integer',
  4: 'Money',
  5: 'Varchar50',
  6: 'Varchar100',
  7: 'VarcharMax',
  8: 'Text',
  9: 'UniqueIdentifier',
  10: 'Varchar200',
  11: 'VarcharOther',
  12: 'VarBinary',
};

export const MAX_LENGTH: Record<number, number> = { 5: 50, 6: 100, 10: 200 };

/** The input element's type for a column type (checkbox for Boolean, date, number or text). */
export function inputType(typeId: number): 'checkbox' | 'date' | 'number' | 'text' {
  if (typeId === 0) return 'checkbox';
  if (typeId === 1) return 'date';
  if (typeId === 2 || typeId === 3) return 'number';
  return 'text';
}

/** An input's text as the column's JSON value; '' is null (a key is never sent null: the server says why). */
export function jsonValue(typeId: number, text: string | boolean): unknown {
  if (typeof text === 'boolean') return text;
  if (text === '') return null;
  if (typeId === 2 || typeId === 3) return Number(text);
  return text;
}

export const textOf = (v: unknown): string => (v === null || v === undefined ? '' : String(v));
