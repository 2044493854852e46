// A page on its own origin that signs in with an identity provider's access token (JWT mode) and
// calls the API with fetch(), then follows the store with the snippet of follow-page.ts. It shows
// each answer as a line of text, for the test to read as a person would.
import { followPage } from './follow-page.js';

/**
 * The token comes in the URL's fragment (`#access_token=…&id=…`), as an identity provider's
 * redirect hands it to a page. A `ticket` there too is opened with EventSource as it is, to see
 * a page of an origin not on the list refused even a good ticket. "Follow" only follows, each
 * ticket made with a token the page renews from its identity provider (`window.renewToken`, which
 * the test gives it), as a page whose tokens expire does.
 */
export const jwtPage = (api: string): string =>
  `${followPage(api)}
<button>Run</button>
<button>Follow</button>
<ol aria-label="calls"></ol>
<ol aria-label="changes"></ol>
<p role="status"></p>
<script>
  const hash = new URLSearchParams(location.hash.slice(1));
  const token = hash.get('access_token');
  const id = hash.get('id');
  const show = (list, text) => {
    const item = document.createElement('li');
    item.textContent = text;
    document.querySelector('[aria-label="' + list + '"]').append(item);
  };
  // Every change follow() receives is shown too.
  window.received.push = function (change) {
    const { type, id } = JSON.parse(change.data);
    show('changes', type + ' ' + id + ' at ' + change.id);
    return Array.prototype.push.call(this, change);
  };
  async function call(step, method, path, { headers = {}, body } = {}) {
    const json = body === undefined ? {} : { 'content-type': 'application/json' };
    try {
      return await fetch('${api}' + path, { method, body, headers: { authorization: 'Bearer ' + token, ...json, ...headers } });
    } catch (e) {
      show('calls', step + ': refused, ' + e);
    }
  }
  const until = (done) =>
    new Promise((resolve) => { const t = setInterval(() => done() && resolve(clearInterval(t)), 50); });

  async function run() {
    const list = await call('list', 'GET', '/plants');
    if (list) show('calls', 'list: ' + list.status + ', ' + (await list.json()).length + ' plants');
    const position = list?.headers.get('change-position');
    const following = follow(token, position).then(
      () => until(() => window.opened > 0),
      (e) => show('calls', 'ticket: refused, ' + e),
    );
    if (hash.has('ticket')) {
      const source = new EventSource('${api}/plants/changes?ticket=' + hash.get('ticket'));
      source.onopen = () => show('calls', 'stream: opened');
      source.onerror = () => (source.close(), show('calls', 'stream: failed'));
    }
    const created = await call('create', 'POST', '/plants', { body: JSON.stringify({ id: Number(id), name: 'Fern' }) });
    const etag = created?.headers.get('etag');
    const write = (r) => r.status + ', ETag ' + r.headers.get('etag') + ', at ' + r.headers.get('change-position');
    if (created) show('calls', 'create: ' + write(created));
    const edit = (step, name) =>
      call(step, 'PUT', '/plants/' + id, { headers: { 'if-match': etag }, body: JSON.stringify({ name }) });
    const edited = await edit('edit', 'Fern, repotted');
    if (edited) show('calls', 'edit: ' + write(edited));
    const stale = await edit('stale edit', 'Fern, lost');
    const problem = async (r) => { const b = await r.json(); return r.status + ', error ' + b.error + ': ' + b.message; };
    if (stale) show('calls', 'stale edit: ' + (await problem(stale)));
    await following; // its requests counted before this token runs out of them
    for (let n = 1; n <= 30; n++) {
      const r = await call('flood', 'GET', '/plants?limit=1');
      if (!r) break;
      if (r.status !== 429) continue;
      show('calls', 'flood: ' + (await problem(r)) + ', Retry-After ' + r.headers.get('retry-after'));
      break;
    }
    document.querySelector('[role="status"]').textContent = 'done';
  }
  const [runButton, followButton] = document.querySelectorAll('button');
  runButton.onclick = run;
  followButton.onclick = () => follow(() => window.renewToken());
</script>`;
