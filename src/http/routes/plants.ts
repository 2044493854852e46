import type { FastifyInstance, FastifyReply } from 'fastify';
import { etagOf } from '../../domain/plant-write.js';
import { toPlant, type PlantRecord } from '../../domain/plant.js';
import type { Store } from '../../store/store.js';
import {
  deletePlant,
  patchPlant,
  replacePlant,
  type PlantPatchInput,
  type PlantReplacementInput,
} from '../../use-cases/change-plant.js';
import { createPlant, type NewPlantInput } from '../../use-cases/create-plant.js';
import { getPlant, listPlants, type PlantListInput } from '../../use-cases/read-plants.js';
import { ifMatch, noneMatchHolds } from '../conditional.js';

type IdParams = { id: bigint };

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

export async function plantRoutes(app: FastifyInstance, { store }: { store: Store }): Promise<void> {
  app.operation('addPlant', async (request, reply) =>
    toPlant(withEtag(reply, await createPlant(store, request.body as NewPlantInput))),
  );

  app.operation('listPlants', async (request, reply) => {
    const query = request.query as PlantListInput;
    const page = await listPlants(store, query);
    if (page.nextAfter !== undefined) reply.header('link', nextLink(query, page.nextAfter));
    return page.plants;
  });

  app.operation('getPlant', async (request, reply) => {
    const plant = await getPlant(store, (request.params as IdParams).id);
    // Hashed once: the ETag sent is the one If-None-Match is compared with.
    const etag = etagOf(plant);
    reply.header('etag', etag);
    if (noneMatchHolds(request.headers['if-none-match'], etag)) return reply.code(304).send();
    return plant;
  });

  app.operation('replacePlant', async (request, reply) => {
    const { id } = request.params as IdParams;
    const condition = ifMatch(request.headers['if-match']);
    return toPlant(withEtag(reply, await replacePlant(store, id, request.body as PlantReplacementInput, condition)));
  });

  app.operation('patchPlant', async (request, reply) => {
    const { id } = request.params as IdParams;
    const condition = ifMatch(request.headers['if-match']);
    return toPlant(withEtag(reply, await patchPlant(store, id, request.body as PlantPatchInput, condition)));
  });

  app.operation('deletePlant', async (request, reply) => {
    await deletePlant(store, (request.params as IdParams).id, ifMatch(request.headers['if-match']));
    return reply.code(204).send();
  });
}
