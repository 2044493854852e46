import { loadConfig } from '../config/config.js';
import { createServices, type Services } from '../services.js';

/** Commands read the same settings as the server, and bring the schema up to date first. */
export async function withServices<T>(work: (services: Services) => Promise<T>): Promise<T> {
  const services = await createServices(loadConfig(process.env));
  try {
    return await work(services);
  } finally {
    await services.close();
  }
}
