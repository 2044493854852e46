import type { FastifyInstance } from 'fastify';
import { createPlant, type NewPlantInput } from '../../plants/create-plant.js';
import { deletePlant, replacePlant, type PlantReplacementInput } from '../../plants/change-plants.js';
import { getPlant, listPlants } from '../../plants/read-plants.js';
import { operationRoute, type RouteDeps } from '../operation-route.js';

type IdParams = { id: bigint };

export function plantRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const { store } = deps;

  operationRoute(app, deps, 'addPlant', async (request) => createPlant(store, request.body as NewPlantInput));

  operationRoute(app, deps, 'listPlants', async (request, reply) => {
    const query = request.query as { limit: number; after?: bigint };
    const page = await listPlants(store, query);
    if (page.nextAfter !== undefined) {
      reply.header('link', `</plants?limit=${query.limit}&after=${page.nextAfter}>; rel="next"`);
    }
    return page.plants;
  });

  operationRoute(app, deps, 'getPlant', async (request) => getPlant(store, (request.params as IdParams).id));

  operationRoute(app, deps, 'replacePlant', async (request) =>
    replacePlant(store, (request.params as IdParams).id, request.body as PlantReplacementInput),
  );

  operationRoute(app, deps, 'deletePlant', async (request, reply) => {
    await deletePlant(store, (request.params as IdParams).id);
    return reply.code(204).send();
  });
}
