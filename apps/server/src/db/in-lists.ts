/**
 * Values in groups small enough for one IN list on both databases (SQLite binds at most 32,766
 * parameters a statement, PostgreSQL 65,535), for reads and updates of many rows by key.
 */
export function inLists<T>(values: readonly T[], size = 500): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < values.length; i += size) out.push(values.slice(i, i + size));
  return out;
}
