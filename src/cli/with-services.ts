import { loadConfig } from '../config/config.js';
import { createCommandServices, type CommandServices } from '../services.js';

/** Commands read the same settings as the server, and bring the schema up to date first. */
export async function withServices<T>(work: (services: CommandServices) => Promise<T>): Promise<T> {
  const services = await createCommandServices(loadConfig(process.env));
  try {
    return await work(services);
  } finally {
    await services.close();
  }
}
