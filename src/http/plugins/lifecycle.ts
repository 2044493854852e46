import fp from 'fastify-plugin';
import type { Dispatcher } from '../../events/dispatcher.js';
import { HttpError } from '../http-error.js';

/**
 * The app's life: once closing starts, new requests get 503 with `Connection: close` while the
 * ones in flight finish; the webhook dispatcher runs while the app is ready, is woken by each
 * successful write (it may have written outbox rows), and stops before the app has closed.
 */
export const lifecyclePlugin = fp<{ dispatcher: Dispatcher }>(
  async (app, { dispatcher }) => {
    let closing = false;
    app.addHook('preClose', async () => {
      closing = true;
    });
    app.addHook('onRequest', async (_request, reply) => {
      if (!closing) return;
      reply.header('connection', 'close');
      throw new HttpError(503, 'the server is shutting down; retry', { 'retry-after': '1' });
    });
    app.addHook('onResponse', async (request, reply) => {
      if (request.method !== 'GET' && request.method !== 'HEAD' && reply.statusCode < 300) dispatcher.nudge();
    });
    app.addHook('onReady', async () => dispatcher.start());
    // Attempts in flight are cut short and recorded before the store closes.
    app.addHook('onClose', async () => dispatcher.stop());
  },
  { name: 'lifecycle' },
);
