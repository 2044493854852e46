import type { FastifyInstance } from 'fastify';
import { createPlant, type NewPlantInput } from '../../plants/create-plant.js';
import type { ApiDocument } from '../../openapi/document.js';
import type { Store } from '../../store/store.js';
import { operationRoute } from '../operation-route.js';

export function plantRoutes(app: FastifyInstance, deps: { doc: ApiDocument; store: Store }): void {
  operationRoute(app, deps, 'addPlant', async (request) => createPlant(deps.store, request.body as NewPlantInput));
}
