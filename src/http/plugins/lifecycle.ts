import fp from 'fastify-plugin';
import type { Dispatcher } from '../../events/dispatcher.js';
import type { ChangeHub } from '../../feed/index.js';
import { HttpError } from '../errors/http-error.js';

/**
 * The app's life: once closing starts, new requests get 503 with `Connection: close` while the
 * ones in flight finish; the webhook dispatcher runs while the app listens, is woken by each
 * successful write (it may have written outbox rows), and stops before the app has closed; so
 * does the change log's hub (feed/hub.ts), which follows the log's end for the feed.
 */
export const lifecyclePlugin = fp<{ dispatcher: Dispatcher; hub: ChangeHub }>(
  async (app, { dispatcher, hub }) => {
    let closing = false;
    app.addHook('preClose', async () => {
      closing = true;
    });
    // Synchronous hooks, which call done (request-log.ts says why): every request runs them.
    app.addHook('onRequest', (_request, reply, done) => {
      if (!closing) return done();
      reply.header('connection', 'close');
      throw new HttpError(503, 'the server is shutting down; retry', { 'retry-after': '1' });
    });
    app.addHook('onResponse', (request, reply, done) => {
      if (request.method !== 'GET' && request.method !== 'HEAD' && reply.statusCode < 300) dispatcher.nudge();
      done();
    });
    app.addHook('onReady', async () => {
      await hub.start();
    });
    // Only a server that listens sends webhooks: a start that fails to listen (its port taken,
    // its host unknown) closes again and must not have sent any meanwhile. In-process (tests
    // that inject) the dispatcher is started by whoever serves the app.
    app.addHook('onListen', async () => {
      dispatcher.start();
    });
    // Attempts in flight are cut short and recorded before the store closes.
    app.addHook('onClose', async () => {
      hub.stop();
      await dispatcher.stop();
    });
  },
  { name: 'lifecycle' },
);
