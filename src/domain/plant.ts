/** A plant as stored. `tag` is undefined when the plant has no tag; `""` is a tag. */
export interface PlantRecord {
  id: bigint;
  name: string;
  tag?: string;
}

/** What creating or replacing a plant answers: its name and tag, never its id. */
export interface Plant {
  name: string;
  tag?: string;
}

export function plantRecord(id: bigint, name: string, tag: string | undefined): PlantRecord {
  return tag === undefined ? { id, name } : { id, name, tag };
}

export function toPlant(record: PlantRecord): Plant {
  return record.tag === undefined ? { name: record.name } : { name: record.name, tag: record.tag };
}

/** A copy of `items` in ascending order of the plant id each names (ids are int64: bigint order). */
export function inIdOrder<T>(items: readonly T[], id: (item: T) => bigint): T[] {
  return [...items].sort((a, b) => {
    const x = id(a);
    const y = id(b);
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

/** Same name and same tag (an absent tag differs from `""`): a creation with these is a retry. */
export function samePlant(a: PlantRecord, b: PlantRecord): boolean {
  return a.name === b.name && a.tag === b.tag;
}

/**
 * `{"id":…,"name":…,"tag":…}` with the id written exactly (a bigint past 2^53 stays digit for
 * digit) and the tag left out when there is none: an export line and a webhook body alike.
 */
export function plantJson(p: PlantRecord): string {
  const tag = p.tag === undefined ? '' : `,"tag":${JSON.stringify(p.tag)}`;
  return `{"id":${p.id},"name":${JSON.stringify(p.name)}${tag}}`;
}
