import { plantJson, plantRecord } from '../../domain/plant.js';
import { newPlantCheck } from '../../openapi/plant-check.js';
import { recordCheck, RecordProblem, type BackupRecords, type RecordSchema } from './record-kind.js';

/** A plant's line: its members, whose values the API's own schema checks (NewPlant). */
interface PlantLine {
  type: 'plant';
  id: number | bigint;
  name: string;
  tag?: string;
}

const SCHEMA: RecordSchema<PlantLine> = {
  type: 'object',
  properties: { type: { type: 'string', const: 'plant' }, id: {}, name: {}, tag: {} },
  required: ['type', 'id', 'name'],
  additionalProperties: false,
};

/**
 * Plants, by id ascending, each once, ids exact. A plant read back is held to the API's own
 * rules for a new plant: the NewPlant schema of `POST /plants`, as the route applies it.
 */
export const plantRecords: BackupRecords<'plants'> = {
  kind: 'plants',
  type: 'plant',
  noun: 'plant',
  // The plant's own JSON, behind its type: written once, as a webhook body is.
  line: (p) => `{"type":"plant",${plantJson(p).slice(1)}`,
  async reader({ doc }) {
    const [members, check] = await Promise.all([recordCheck(SCHEMA, 'a plant'), newPlantCheck(doc, 'plant')]);
    let last: bigint | undefined;
    return (o) => {
      const { type: _, ...fields } = members(o);
      const problem = check(fields);
      if (problem !== undefined) throw new RecordProblem(problem);
      const plant = plantRecord(BigInt(fields.id), fields.name, fields.tag);
      if (last !== undefined && plant.id <= last) {
        throw new RecordProblem(`plant ${plant.id} is out of order: plants come by id ascending, each once`);
      }
      last = plant.id;
      return plant;
    };
  },
};
