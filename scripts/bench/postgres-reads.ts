// The read benchmark on PostgreSQL: the same loads as on SQLite (reads.ts), each store a schema
// of its own, filled through the plants table (its triggers keep the words of names as the
// write path does). Skipped, saying why, when PostgreSQL cannot be reached.
import { randomBytes } from 'node:crypto';
import { connectOrSkip, SERVER } from './postgres.js';
import { startService } from './processes.js';
import { readLoadsOn, type ReadBench } from './reads.js';
import { fmt } from './report.js';
import { seedPostgresSchema } from './seed.js';

export async function postgresReads(b: ReadBench & { token: string }): Promise<void> {
  console.log(
    `\n## Reads on PostgreSQL, 1,000 and ${b.big.toLocaleString('en')} plants, ${b.rounds} rounds of ${b.seconds} s, A/B interleaved\n`,
  );
  const admin = await connectOrSkip();
  if (!admin) return;
  const schemas: string[] = [];
  try {
    await readLoadsOn(
      b,
      async (size) => {
        const schema = `bench_${randomBytes(4).toString('hex')}`;
        schemas.push(schema);
        // The service migrates the new schema; the plants go in once its tables exist.
        const service = await startService({ DATABASE_URL: `${SERVER}?schema=${schema}`, PLANT_STORE_TOKEN: b.token });
        const seeding = performance.now();
        await seedPostgresSchema(admin, schema, size);
        console.log(`seeded ${size.toLocaleString('en')} plants in ${fmt((performance.now() - seeding) / 1000)} s`);
        return service;
      },
      true,
    );
  } finally {
    for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}
