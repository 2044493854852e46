import type { ApiDocument } from './document.js';

/** Says what is wrong with a value as a new plant, in the API's words; undefined when nothing is. */
export type PlantCheck = (value: unknown) => string | undefined;

/**
 * The API's own rules for a new plant: the NewPlant schema of `POST /plants`'s body, as the
 * route applies it, for the commands that read plants from a file (import, restore). `what`
 * names the value in messages ("line", "plant"). The validator is loaded here, when one of them
 * runs, not by every command that starts.
 */
export async function newPlantCheck(doc: ApiDocument, what: string): Promise<PlantCheck> {
  const [{ createAjv, validationError }, { requestSchema }] = await Promise.all([
    import('./validation.js'),
    import('./request-schema.js'),
  ]);
  const schema = doc.operations.get('addPlant')?.requestBody;
  if (!schema) throw new Error('the OpenAPI document has no NewPlant request body');
  const validate = createAjv().compile(requestSchema(schema) as object);
  return (value) => (validate(value) ? undefined : validationError(validate.errors ?? [], what).message);
}
