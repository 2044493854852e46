import { loadConfig } from '../config/config.js';
import { redactPassword } from '../config/parse.js';
import { SETTINGS } from '../config/settings.js';
import { StoreMissingError } from '../domain/errors.js';
import { createCommandServices, type CommandServices } from '../services.js';
import type { CliIo } from './io.js';
import { fail } from './output.js';

export interface CommandStore {
  /** Create the store when there is none (migrate, restore); every other command needs one that exists. */
  create?: boolean;
}

/** Commands read the same settings as the server, and bring the schema up to date first. */
export async function withServices<T>(
  io: CliIo,
  work: (services: CommandServices) => Promise<T>,
  { create = false }: CommandStore = {},
): Promise<T> {
  const config = loadConfig(io.env);
  let services: CommandServices;
  try {
    services = await createCommandServices(config, { mustExist: !create });
  } catch (err) {
    if (err instanceof StoreMissingError) fail(noStore(config.databaseUrl, io.env, err));
    throw err;
  }
  try {
    return await work(services);
  } finally {
    await services.close();
  }
}

/** The line that says which store was looked for, and how to get one. */
function noStore(databaseUrl: string, env: NodeJS.ProcessEnv, err: StoreMissingError): string {
  const unset = !env[SETTINGS.databaseUrl.env];
  return (
    `no store at DATABASE_URL=${redactPassword(databaseUrl)}${unset ? ' (not set: the default)' : ''}: ` +
    `${err.message}; set DATABASE_URL to your store, or create one with plant-store migrate`
  );
}
