import type Database from 'better-sqlite3';

/**
 * Statements over many rows at once: `sql(n)` is the statement for `n` rows (a multi-row
 * INSERT's VALUES, an IN list), prepared once for each count up to `most` and kept. Each call of
 * a statement costs a crossing into SQLite and a reset, about 0.9 µs, as much as much of the
 * insert itself: a batch of 1,000 plants wrote its rows one call each in twice the time.
 */
export function manyRows(db: Database.Database, most: number, sql: (n: number) => string) {
  const prepared = new Map<number, Database.Statement>();
  const statement = (n: number): Database.Statement => {
    let s = prepared.get(n);
    if (!s) prepared.set(n, (s = db.prepare(sql(n))));
    return s;
  };
  return {
    most,
    /** Runs the statement over `items` in chunks of at most `most`, each with its items' values in order. */
    run<T>(items: readonly T[], values: (item: T, index: number) => unknown[]): void {
      for (let i = 0; i < items.length; i += most) {
        const chunk = items.slice(i, i + most);
        statement(chunk.length).run(chunk.flatMap((item, k) => values(item, i + k)));
      }
    },
    /** The first column of every row the statement reads, over `items` in chunks of at most `most`. */
    pluck<T, V>(items: readonly T[], values: (item: T) => unknown[]): V[] {
      const out: V[] = [];
      for (let i = 0; i < items.length; i += most) {
        const chunk = items.slice(i, i + most);
        out.push(...(statement(chunk.length).pluck().all(chunk.flatMap(values)) as V[]));
      }
      return out;
    },
  };
}

/** `(?, ?, …)` for a row of `columns`, `n` times: a multi-row INSERT's VALUES. */
export const valuesOf = (n: number, columns: number): string =>
  Array<string>(n)
    .fill(`(${Array<string>(columns).fill('?').join(', ')})`)
    .join(', ');
