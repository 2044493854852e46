/** An older plant-store on a store a newer one migrated: refused, never migrated "back". */
export function newerSchema(found: number, known: number): Error {
  return new Error(
    `the store's schema is version ${found}, newer than this plant-store knows (${known}): ` +
      'run the newer plant-store, or restore a backup taken before the upgrade',
  );
}
