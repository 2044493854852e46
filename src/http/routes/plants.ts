import type { FastifyInstance } from 'fastify';
import type { Store } from '../../store/store.js';
import { deletePlant, replacePlant, type PlantReplacementInput } from '../../use-cases/change-plant.js';
import { createPlant, type NewPlantInput } from '../../use-cases/create-plant.js';
import { getPlant, listPlants } from '../../use-cases/read-plants.js';
import { toPlant } from '../../domain/plant.js';

type IdParams = { id: bigint };

export async function plantRoutes(app: FastifyInstance, { store }: { store: Store }): Promise<void> {
  app.operation('addPlant', async (request) => createPlant(store, request.body as NewPlantInput));

  app.operation('listPlants', async (request, reply) => {
    const query = request.query as { limit: number; after?: bigint };
    const page = await listPlants(store, query);
    if (page.nextAfter !== undefined) {
      reply.header('link', `</plants?limit=${query.limit}&after=${page.nextAfter}>; rel="next"`);
    }
    return page.plants;
  });

  app.operation('getPlant', async (request) => getPlant(store, (request.params as IdParams).id));

  app.operation('replacePlant', async (request) =>
    toPlant(await replacePlant(store, (request.params as IdParams).id, request.body as PlantReplacementInput)),
  );

  app.operation('deletePlant', async (request, reply) => {
    await deletePlant(store, (request.params as IdParams).id);
    return reply.code(204).send();
  });
}
