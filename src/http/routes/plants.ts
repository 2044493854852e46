import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { etagOf } from '../../domain/plant-write.js';
import { toPlant, type PlantRecord } from '../../domain/plant.js';
import type { Store } from '../../store/store.js';
import type { Tracing } from '../../tracing/tracing.js';
import { deletePlant, patchPlant, replacePlant, type PlantChanged } from '../../use-cases/change-plant.js';
import { createPlant } from '../../use-cases/create-plant.js';
import { getPlant, listPlants, type PlantListInput } from '../../use-cases/read-plants.js';
import { writeBatch } from '../../use-cases/write-batch.js';
import { preconditions } from '../headers/conditional.js';
import { readsAtLeast } from '../headers/read-position.js';
import type { OperationRoute } from '../plugins/contract.js';

/**
 * Batches read and applied at once by one instance: each holds up to a megabyte of body and its
 * thousand operations in memory, and they are CPU-bound (four keep the store busy in the bench).
 */
const BATCHES_AT_ONCE = 8;

/** The operations on one plant, `/plants/{id}`. */
type OnePlant = 'getPlant' | 'replacePlant' | 'patchPlant' | 'deletePlant';

/** Every response carrying one plant says which version of it this is. */
function withEtag(reply: FastifyReply, plant: PlantRecord): PlantRecord {
  reply.header('etag', etagOf(plant));
  return plant;
}

/** The next page's link repeats the filters, so following it keeps them. */
function nextLink(query: PlantListInput, after: bigint): string {
  const params = [`limit=${query.limit}`];
  for (const tag of query.tag ?? []) params.push(`tag=${encodeURIComponent(tag)}`);
  if (query.q !== undefined) params.push(`q=${encodeURIComponent(query.q)}`);
  params.push(`after=${after}`);
  return `</plants?${params.join('&')}>; rel="next"`;
}

export async function plantRoutes(
  app: FastifyInstance,
  { store, tracing, batchBodyLimit }: { store: Store; tracing: Tracing | undefined; batchBodyLimit: number },
): Promise<void> {
  /** What each write's use-case is given beside the store. */
  const context = { tracing };
  /**
   * A write's answer says where in the change log it stands (the feed learnt of it from the
   * store, as the write was acknowledged).
   */
  const at = (reply: FastifyReply, position: bigint): void => {
    reply.header('change-position', String(position));
  };
  const logged = (reply: FastifyReply, { plant, position }: PlantChanged): PlantRecord => {
    at(reply, position);
    return plant;
  };

  app.operation('addPlant', async (request, reply) =>
    toPlant(withEtag(reply, logged(reply, await createPlant(store, request.body, context)))),
  );

  app.operation('listPlants', async (request, reply) => {
    const page = await listPlants(store, request.query, readsAtLeast(request.headers));
    reply.header('change-position', String(page.position));
    if (page.nextAfter !== undefined) reply.header('link', nextLink(request.query, page.nextAfter));
    return page.plants;
  });

  // The operations on one plant evaluate If-Match and If-None-Match against its ETag: a read
  // here, a change in the store's transaction with the write (the write path's decideWrite).
  const own = { ownPreconditions: true };
  const target = (request: FastifyRequest<OperationRoute<OnePlant>>) => ({
    id: request.params.id,
    conditions: preconditions(request.headers),
  });

  app.operation(
    'getPlant',
    async (request, reply) => {
      const { id, conditions } = target(request);
      const read = await getPlant(store, id, conditions, readsAtLeast(request.headers));
      // Hashed once: the ETag sent is the one the conditions were compared with.
      reply.header('etag', read.etag);
      return read.notModified ? reply.code(304).send() : read.plant;
    },
    own,
  );

  app.operation(
    'replacePlant',
    async (request, reply) => {
      const { id, conditions } = target(request);
      const plant = logged(reply, await replacePlant(store, id, request.body, conditions, context));
      return toPlant(withEtag(reply, plant));
    },
    own,
  );

  app.operation(
    'patchPlant',
    async (request, reply) => {
      const { id, conditions } = target(request);
      return toPlant(withEtag(reply, logged(reply, await patchPlant(store, id, request.body, conditions, context))));
    },
    own,
  );

  app.operation(
    'deletePlant',
    async (request, reply) => {
      const { id, conditions } = target(request);
      logged(reply, await deletePlant(store, id, conditions, context));
      return reply.code(204).send();
    },
    own,
  );

  app.operation(
    'writePlantBatch',
    async (request, reply) => {
      const { results, position } = await writeBatch(store, request.body, context);
      at(reply, position);
      return {
        results: results.map(({ plant, deleted }) =>
          deleted ? { status: 204 as const } : { status: 200 as const, plant: toPlant(plant), etag: etagOf(plant) },
        ),
      };
    },
    { bodyLimit: batchBodyLimit, atOnce: BATCHES_AT_ONCE },
  );
}
