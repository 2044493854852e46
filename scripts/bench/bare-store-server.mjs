// A second reference of `npm run bench`: the bare node:http baseline with the store behind it.
// It parses the body with JSON.parse as the baseline does, makes the write through the same use
// case and store as the service (the write path, its rules, the search index, the group commit
// and its fdatasync before the answer), and answers the same JSON. It has none of the rest: no
// Fastify, token check, rate limit, validation, exact int64 reader, log line or metrics. The
// service against it is what those cost; it against the bare baseline is what a durable write
// costs on this machine. Built code only (dist/), as the service runs. Its errors are not the
// contract's (the loads make none; the benchmark counts any non-2xx).
import { createServer } from 'node:http';
import { SETTINGS } from '../../dist/config/settings.js';
import { openStore } from '../../dist/store/open-store.js';
import { createPlant } from '../../dist/use-cases/create-plant.js';
import { deletePlant, replacePlant } from '../../dist/use-cases/change-plant.js';
import { writeBatch } from '../../dist/use-cases/write-batch.js';

const { store } = await openStore({
  databaseUrl: process.env.DATABASE_URL,
  databasePoolSize: SETTINGS.databasePoolSize.default,
  sqliteCheckpointPages: SETTINGS.sqliteCheckpointPages.default,
});

/** A plant as the service answers it. */
const shown = ({ plant }) => (plant.tag === undefined ? { name: plant.name } : { name: plant.name, tag: plant.tag });

/** The write a request asks for, as the service's routes would make it, and what it answers. */
async function write(method, url, body) {
  if (method === 'POST' && url === '/plants/batch') {
    const { results } = await writeBatch(store, JSON.parse(body));
    return results.map((r) => (r.deleted ? { status: 204 } : { status: 200, plant: shown(r) }));
  }
  return shown(await writeOne(method, url, body));
}

function writeOne(method, url, body) {
  if (method === 'POST' && url === '/plants') return createPlant(store, JSON.parse(body));
  const id = /^\/plants\/(\d+)$/.exec(url)?.[1];
  if (id === undefined) return Promise.reject(Object.assign(new Error('no such route'), { status: 404 }));
  if (method === 'PUT') return replacePlant(store, BigInt(id), JSON.parse(body));
  if (method === 'DELETE') return deletePlant(store, BigInt(id));
  return Promise.reject(Object.assign(new Error('no such method'), { status: 405 }));
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    write(req.method, req.url, Buffer.concat(chunks).toString('utf8')).then(
      (answer) => {
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify(answer));
      },
      (err) => {
        res.writeHead(err.status ?? 400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: err.status ?? 400, message: err.message }));
      },
    );
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(
    `${JSON.stringify({ msg: 'plant-store listening', url: `http://127.0.0.1:${server.address().port}` })}\n`,
  );
});
process.on('SIGTERM', () => server.close(() => store.close().then(() => process.exit(0))));
