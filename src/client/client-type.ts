// The type of the client createPlantStoreClient makes: openapi-fetch's client of the document's
// paths, except PATCH. openapi-fetch infers each call's options from the call, and its body type
// for a schema whose members are all optional (a merge patch) lost TypeScript's check that an
// object shares a member with it: `{nmae: 'x'}` and `42` passed as a PlantPatch. PATCH here takes
// the merge patch itself, so a misspelt member, a wrong type or a non-object fails to compile.
import type { Client, FetchOptions, FetchResponse } from 'openapi-fetch';
import type { components, operations, paths } from './schema.js';

type PatchPlant = operations['patchPlant'];

/** The options of `PATCH /plants/{id}`: openapi-fetch's, with the body a PlantPatch. */
export type PlantPatchInit = Omit<FetchOptions<PatchPlant>, 'body'> & {
  body: components['schemas']['PlantPatch'];
};

export interface PlantStoreClient extends Omit<Client<paths, 'application/json'>, 'PATCH'> {
  /**
   * `PATCH /plants/{id}`: a JSON merge patch (`{tag: null}` removes the tag), sent as
   * `application/merge-patch+json`; with `If-Match`, only if the plant is still that version.
   */
  PATCH(
    url: '/plants/{id}',
    init: PlantPatchInit,
  ): Promise<FetchResponse<PatchPlant, PlantPatchInit, 'application/json'>>;
}
