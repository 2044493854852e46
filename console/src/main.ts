// The console's entry: sign in with a pasted token, then the plants view following the store.
// A client of the public API only: every call is one of the document's operations, with the
// token given, so the page can do what that token may do and nothing more.
import { byId, field, h, showAlert } from './dom.js';
import { HealthView } from './health/view.js';
import { ImportView } from './import/view.js';
import { followStore, type Following } from './live.js';
import { PlantList } from './plants/list.js';
import { forget, noAnswer, open, refusal, save, saved } from './session.js';
import { showViews } from './views.js';

const main = byId('main');
const signOut = byId<HTMLButtonElement>('sign-out');
const live = byId('live');
let follower: Following | undefined;
let health: HealthView | undefined;

function signInView(message = ''): void {
  const token = field('API token', { name: 'token', type: 'password', autocomplete: 'off', required: true });
  const error = h('p', { role: 'alert', className: 'alert' }, message);
  main.replaceChildren(
    h(
      'form',
      {
        'aria-labelledby': 'sign-in-heading',
        onsubmit: (e: Event) => {
          e.preventDefault();
          void start(token.input.value.trim());
        },
      },
      h('h2', { id: 'sign-in-heading' }, 'Sign in'),
      h(
        'p',
        {},
        'Paste an API token (plant-store token create prints one). It is kept for this tab only, and goes with each request to the API.',
      ),
      token.wrap,
      error,
      h('div', { className: 'actions' }, h('button', { type: 'submit' }, 'Sign in')),
    ),
  );
  token.input.focus();
}

async function start(token: string): Promise<void> {
  const session = open(token);
  const probe = await session.client.GET('/plants', { params: { query: { limit: 1 } } }).catch(noAnswer);
  if (typeof probe === 'string') return signInView(probe);
  if (probe.response.status === 401) {
    forget();
    return signInView(refusal(probe.response, probe.error));
  }
  save(token);
  signOut.hidden = false;
  const list = new PlantList(session);
  health = new HealthView(session);
  const shown = health;
  showViews(main, {
    Plants: list,
    Import: new ImportView(session),
    Health: { element: health.element, shown: () => shown.start() },
  });
  // A token that may not read plants has no list to show; any other refusal (a 503, a 429) is
  // passing: the list tells it, and the live list and a click on Filter try again.
  if (probe.response.status === 403) return showAlert(refusal(probe.response, probe.error));
  await list.load(undefined);
  follower = followStore(session, list, live);
}

signOut.addEventListener('click', () => {
  follower?.close();
  follower = undefined;
  health?.stop();
  health = undefined;
  forget();
  showAlert();
  signOut.hidden = true;
  live.hidden = true;
  signInView();
});

const token = saved();
if (token) void start(token);
else signInView();
