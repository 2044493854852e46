import { loadConfig } from '../config/config.js';
import { createCommandServices, type CommandServices } from '../services.js';
import type { CliIo } from './io.js';

/** Commands read the same settings as the server, and bring the schema up to date first. */
export async function withServices<T>(io: CliIo, work: (services: CommandServices) => Promise<T>): Promise<T> {
  const services = await createCommandServices(loadConfig(io.env));
  try {
    return await work(services);
  } finally {
    await services.close();
  }
}
