/**
 * The click batch's array parameters on PostgreSQL (db/pg-array-literal.ts): every value a click
 * row can hold reaches PostgreSQL as itself, read back through the same casts the batch function's
 * parameters use. The encoder's refusals need no database.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { arrayLiteral, columnLiteral } from '../src/db/pg-array-literal.js';
import { dbKind, postgresUrl } from './helpers/index.js';

/** Text a visitor's browser can send: quotes, backslashes, separators, braces, words PostgreSQL reads specially. */
const AWKWARD_TEXT = [
  '',
  ' ',
  'NULL',
  'null',
  'a,b',
  '{x}',
  '"quoted"',
  'back\\slash',
  '\\"both\\"',
  'ends with a backslash \\',
  'tab\tand\nnewline',
  '  leading and trailing  ',
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36',
  'https://shop.example/p?q=1&r={2}#"h"',
  'Zürich – 東京 – 🙂',
];

describe('array literals: what the encoder refuses', () => {
  it('a number that is not a safe integer is refused, not written as another value', () => {
    expect(() => arrayLiteral([1.5])).toThrow(TypeError);
    expect(() => arrayLiteral([Number.NaN])).toThrow(TypeError);
    expect(() => arrayLiteral([Number.POSITIVE_INFINITY])).toThrow(TypeError);
    expect(() => arrayLiteral([2 ** 53])).toThrow(TypeError);
  });

  it('an object is refused', () => {
    expect(() => columnLiteral([[{}]], 0)).toThrow(TypeError);
  });

  it('an empty column is the empty array', () => {
    expect(arrayLiteral([])).toBe('{}');
    expect(columnLiteral([], 3)).toBe('{}');
  });
});

describe.skipIf(dbKind !== 'postgres')('[postgres] array literals read back as the values they encode', () => {
  let client: pg.Client;

  beforeAll(async () => {
    const url = await postgresUrl();
    if (!url) throw new Error('PostgreSQL unavailable');
    client = new pg.Client({ connectionString: url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
  });

  const readBack = async (literal: string, type: string): Promise<unknown[]> => {
    const { rows } = await client.query<{ v: unknown[] }>(`select $1::${type}[] as v`, [literal]);
    return rows[0].v;
  };

  it('text, with nulls among it, comes back character for character', async () => {
    const values = [...AWKWARD_TEXT, null, undefined];
    expect(await readBack(arrayLiteral(values), 'text')).toEqual([...AWKWARD_TEXT, null, null]);
  });

  it('a column of rows is that column, row by row', async () => {
    const rows = AWKWARD_TEXT.map((text, i) => [i, text, i % 2 === 0]);
    expect(await readBack(columnLiteral(rows, 1), 'text')).toEqual(AWKWARD_TEXT);
    expect(await readBack(columnLiteral(rows, 0), 'int4')).toEqual(AWKWARD_TEXT.map((_, i) => i));
    expect(await readBack(columnLiteral(rows, 2), 'bool')).toEqual(AWKWARD_TEXT.map((_, i) => i % 2 === 0));
  });

  it('integers up to the largest safe one, negative ones and nulls, into int8', async () => {
    const values = [0, -1, 2_147_483_648, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, null];
    // node-pg reads int8 as text, so that no digit is lost.
    expect(await readBack(arrayLiteral(values), 'int8')).toEqual(values.map((v) => (v === null ? null : String(v))));
  });

  it('booleans into bool', async () => {
    expect(await readBack(arrayLiteral([true, false, null]), 'bool')).toEqual([true, false, null]);
  });

  it('the same literal as node-pg would have sent reads back the same', async () => {
    // The writer replaced node-pg's own array encoding: for the same values both must read back alike.
    const values = [...AWKWARD_TEXT, null];
    const { rows } = await client.query<{ ours: string[]; theirs: string[] }>('select $1::text[] as ours, $2::text[] as theirs', [arrayLiteral(values), values]);
    expect(rows[0].ours).toEqual(rows[0].theirs);
  });
});
