// The batch section's ceiling on SQLite: what the SQLite store's own statements for a batch of
// 1,000 creations reach on their own, with no HTTP, no JSON, no write path's decisions and no
// answer. Each transaction is what the store runs for such a batch on its write connection: the
// plants' ids checked free, the plants and their words in multi-row INSERTs, the log's position
// read, the 1,000 changes written to the log (the store's own sqlitePlantTx and sqliteLog, from
// dist/), then COMMIT; the WAL is made durable by the store's WalSync (fdatasync on libuv's thread
// pool, one sync covering the commits before it), with at most CONNECTIONS commits waiting, as
// with the bench's batch connections. SQLite has one writer per store: any server over this schema
// runs these statements on one thread, so their rate here bounds any server's batches.
//
// Where it differs from the store, it is the faster, so the bound stays above what the store can
// do: the writer runs a batch inside a savepoint and with its journal on disk (temp_store is
// MEMORY for small jobs only: writer.ts), and neither is done here (a fresh-clone audit measured
// the store's way about 10% slower). It commits each batch alone, where the writer puts the
// batches queued in one turn of the event loop into one commit: four batches a commit ran 0-10%
// faster in that audit, within the noise of its runs.
//
// Argv: <store file> <seconds> <first id>; the store is made (migrated) as the server makes it.
// Prints one JSON line:
// { plants, seconds, cpuMs } (the process's user + system CPU over the run).
import Database from 'better-sqlite3';
import { SETTINGS } from '../../dist/config/settings.js';
import { newEvent } from '../../dist/domain/webhook.js';
import { openStore } from '../../dist/store/open-store.js';
import { sqliteLog } from '../../dist/store/sqlite/changes.js';
import { sqlitePlantTx } from '../../dist/store/sqlite/plant-tx.js';
import { WalSync } from '../../dist/store/sqlite/wal-sync.js';

const [path, seconds, firstId] = process.argv.slice(2);
const SIZE = 1000;
const CONNECTIONS = 4;

const { store } = await openStore({
  databaseUrl: `sqlite:${path}`,
  databasePoolSize: SETTINGS.databasePoolSize.default,
  sqliteCheckpointPages: SETTINGS.sqliteCheckpointPages.default,
});
await store.close();
const db = new Database(path, { fileMustExist: true });
// As the store's connections are opened (connection.ts) and its writer set up (writer.ts,
// sqlite-store.ts), but for temp_store (above).
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = ON');
db.pragma('temp_store = MEMORY');
db.pragma(`wal_autocheckpoint = ${SETTINGS.sqliteCheckpointPages.default}`);
db.defaultSafeIntegers(true);
const begin = db.prepare('BEGIN IMMEDIATE');
const commit = db.prepare('COMMIT');
const tx = sqlitePlantTx(db, sqliteLog(db));
const sync = new WalSync(`${path}-wal`);

let next = BigInt(firstId);
let plants = 0;
const waiting = [];
const cpu = process.cpuUsage();
const started = performance.now();
const end = started + Number(seconds) * 1000;
while (performance.now() < end) {
  const creations = [];
  for (let i = 0; i < SIZE; i++) creations.push({ id: next++, name: 'Monstera', tag: 'tropical' });
  const now = Date.now();
  begin.run();
  const { inserted } = await tx.read(
    creations.map((p) => p.id),
    creations,
  );
  if (inserted.size !== SIZE) throw new Error(`${SIZE - inserted.size} ids were taken`);
  await tx.log(creations.map((p) => newEvent('plant.created', p, now)));
  commit.run();
  waiting.push(sync.durable(sync.commit()));
  if (waiting.length >= CONNECTIONS) await waiting.shift();
  plants += SIZE;
}
await Promise.all(waiting);
const elapsed = (performance.now() - started) / 1000;
const { user, system } = process.cpuUsage(cpu);
sync.close();
db.close();
process.stdout.write(`${JSON.stringify({ plants, seconds: elapsed, cpuMs: (user + system) / 1000 })}\n`);
