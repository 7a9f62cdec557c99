/**
 * PostgreSQL array literals (`{1,NULL,"a \"b\""}`) built directly from a batch's rows, for the
 * array parameters of the click batch function (db/postgres-click-writer.ts).
 *
 * node-pg turns a JS array parameter into the same literal, but quotes every element through two
 * regular-expression replaces and a string conversion each: about 74 µs for a batch of 18 clicks
 * (31 columns), against about 22 µs here (docs/performance.md, session 52). The output differs
 * only in that numbers and booleans are written bare, as PostgreSQL's own array output writes them;
 * the values PostgreSQL reads back are the same.
 */

/** An element that must be escaped inside double quotes: a backslash or a double quote. */
const NEEDS_ESCAPE = /["\\]/;
const ESCAPED = /["\\]/g;

/**
 * One element. Strings are always quoted, so an empty string, `NULL`, spaces, commas and braces
 * stay text; null and undefined are SQL NULL; numbers, bigints and booleans are written as
 * PostgreSQL reads them for int, bigint and bool arrays.
 */
function element(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string') return NEEDS_ESCAPE.test(value) ? `"${value.replace(ESCAPED, '\\$&')}"` : `"${value}"`;
  if (typeof value === 'number') {
    // A number PostgreSQL would read as something else (NaN or Infinity into an int column, or
    // 1e+21) is a bug of the caller: refuse it here rather than store a different value (the message names no value: errors are logged).
    if (!Number.isSafeInteger(value)) throw new TypeError('array literal: a number that is not a safe integer');
    return String(value);
  }
  if (typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  throw new TypeError(`array literal: cannot encode a value of type ${typeof value}`);
}

/** The literal of `count` elements, the i-th being `valueAt(i)`. */
function literal(count: number, valueAt: (i: number) => unknown): string {
  let out = '{';
  for (let i = 0; i < count; i++) {
    if (i > 0) out += ',';
    out += element(valueAt(i));
  }
  return `${out}}`;
}

/** The literal of one column (`index`) of `rows`, one element per row. */
export const columnLiteral = (rows: readonly (readonly unknown[])[], index: number): string => literal(rows.length, (i) => rows[i][index]);

/** The literal of `values`, one element each. */
export const arrayLiteral = (values: readonly unknown[]): string => literal(values.length, (i) => values[i]);
