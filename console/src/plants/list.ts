// The plants view: a page of the list at a time (keyset: each page starts after the last id of
// the one before, as the API's Link gives it), filtered by tag and searched by words; each row
// with its Edit and Delete. Live changes land here through `apply`.
import type { NewPlant } from '../../../src/client/index.js';
import type { Change } from '../../../src/client/follow.js';
import { nextQuery } from '../../../src/client/link.js';
import { field, h, showAlert } from '../dom.js';
import { refusal, type Session } from '../session.js';
import { createPlant, deletePlant, editPlant } from './editor.js';
import { compareIds, idOf, onPage, passes, type Filters } from './rows.js';

const PAGE_SIZE = 20;
/** How long a changed row stays marked. */
const MARK_MS = 2000;

export class PlantList {
  readonly element: HTMLElement;
  private readonly rows = new Map<string, { plant: NewPlant; tr: HTMLTableRowElement }>();
  private readonly tbody = h('tbody');
  private readonly summary = h('p', { className: 'muted', 'aria-live': 'polite' });
  private readonly previous = h(
    'button',
    { type: 'button', className: 'plain', onclick: () => this.back() },
    'Previous page',
  );
  private readonly next = h(
    'button',
    { type: 'button', className: 'plain', onclick: () => this.forward() },
    'Next page',
  );
  private filters: Filters = { tags: [], q: '' };
  private after: string | undefined;
  private nextAfter: string | undefined;
  private readonly earlier: (string | undefined)[] = [];

  constructor(private readonly session: Session) {
    const tag = field('Tag', { name: 'tag', placeholder: 'tropical, succulent' });
    const q = field('Search', { name: 'q', type: 'search', placeholder: 'words of a name' });
    const filter = (e: Event) => {
      e.preventDefault();
      const tags = tag.input.value
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean);
      this.filters = { tags, q: q.input.value.trim() };
      this.earlier.length = 0;
      void this.load(undefined);
    };
    this.element = h(
      'section',
      { 'aria-labelledby': 'plants-heading' },
      h('h2', { id: 'plants-heading' }, 'Plants'),
      h(
        'form',
        { className: 'filters', role: 'search', onsubmit: filter },
        tag.wrap,
        q.wrap,
        h('div', {}, h('button', { type: 'submit' }, 'Filter')),
      ),
      h(
        'div',
        { className: 'actions' },
        h('button', { type: 'button', onclick: () => createPlant(session, this.saved) }, 'New plant'),
      ),
      h(
        'table',
        { 'aria-labelledby': 'plants-heading' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', { scope: 'col' }, 'Id'),
            h('th', { scope: 'col' }, 'Name'),
            h('th', { scope: 'col' }, 'Tag'),
            h('th', { scope: 'col' }, h('span', { className: 'visually-hidden' }, 'Actions')),
          ),
        ),
        this.tbody,
      ),
      this.summary,
      h('nav', { 'aria-label': 'Pages', className: 'actions' }, this.previous, this.next),
    );
  }

  /** Shows the page after `after` (none: the first). */
  async load(after: string | undefined): Promise<void> {
    const { tags, q } = this.filters;
    const query = {
      limit: PAGE_SIZE,
      ...(after !== undefined && { after: BigInt(after) }),
      ...(tags.length > 0 && { tag: tags }),
      ...(q !== '' && { q }),
    };
    const { data, error, response } = await this.session.client.GET('/plants', { params: { query } });
    if (error) return showAlert(refusal(response, error));
    showAlert();
    this.after = after;
    this.nextAfter = new URLSearchParams(nextQuery(response.headers.get('link')) ?? '').get('after') ?? undefined;
    this.rows.clear();
    this.tbody.replaceChildren();
    for (const plant of data) this.put(plant);
    this.paged();
  }

  /** A change from the live stream: the row changes, comes or goes if it belongs to this page. */
  apply(change: Change): void {
    const id = String(change.id);
    const row = this.rows.get(id);
    if (change.type === 'deleted' || !passes(change.plant!, this.filters)) {
      if (row) this.remove(id);
      return;
    }
    if (!row && !onPage(id, this.bounds())) return;
    this.mark(this.put(change.plant!), row ? 'updated' : 'created');
  }

  /** After a snapshot: which of the rows it looked for (`looked`) the store still holds, and as what. */
  reconcile(plants: Map<string, NewPlant>, looked: Set<string>): void {
    for (const [id, row] of this.rows) {
      if (!looked.has(id)) continue;
      const now = plants.get(id);
      if (!now || !passes(now, this.filters)) this.remove(id);
      else if (now.name !== row.plant.name || now.tag !== row.plant.tag) this.mark(this.put(now), 'updated');
    }
  }

  ids(): Set<string> {
    return new Set(this.rows.keys());
  }

  private readonly saved = (id: string, plant: NewPlant | undefined) =>
    plant ? this.apply({ type: 'updated', id: BigInt(id), plant, position: 0, time: '' }) : this.remove(id);

  private bounds() {
    const last = [...this.rows.keys()].reduce<string | undefined>(
      (a, b) => (a === undefined || compareIds(b, a) > 0 ? b : a),
      undefined,
    );
    return { after: this.after, last, hasNext: this.nextAfter !== undefined };
  }

  /** Puts the plant's row in id order, or updates it in place. */
  private put(plant: NewPlant): HTMLTableRowElement {
    const id = idOf(plant);
    const old = this.rows.get(id);
    const tr = this.row(plant);
    if (old) old.tr.replaceWith(tr);
    else {
      // The first row of a greater id, in the table's order (the map's is not).
      const before = [...this.tbody.rows].find(
        (r) => compareIds(r.dataset.id!, id) > 0 && this.rows.has(r.dataset.id!),
      );
      this.tbody.insertBefore(tr, before ?? null);
    }
    this.rows.set(id, { plant, tr });
    this.paged();
    return tr;
  }

  private row(plant: NewPlant): HTMLTableRowElement {
    const id = idOf(plant);
    const label = `${plant.name} (${id})`;
    const edit = async () => {
      const refused = await editPlant(this.session, id, this.saved);
      if (refused) showAlert(refused);
    };
    return h(
      'tr',
      { 'data-id': id },
      h('td', { className: 'id', 'data-label': 'Id' }, id),
      h('td', { 'data-label': 'Name' }, plant.name),
      h('td', { 'data-label': 'Tag' }, plant.tag ?? ''),
      h(
        'td',
        {},
        h(
          'div',
          { className: 'row-actions' },
          h('button', { type: 'button', className: 'plain', 'aria-label': `Edit ${label}`, onclick: edit }, 'Edit'),
          h(
            'button',
            {
              type: 'button',
              className: 'danger',
              'aria-label': `Delete ${label}`,
              onclick: () => deletePlant(this.session, plant, this.saved),
            },
            'Delete',
          ),
        ),
      ),
    );
  }

  private remove(id: string): void {
    const row = this.rows.get(id);
    if (!row) return;
    this.rows.delete(id);
    this.mark(row.tr, 'deleted');
    setTimeout(() => row.tr.remove(), MARK_MS / 2);
    this.paged();
  }

  private mark(tr: HTMLTableRowElement, change: string): void {
    tr.dataset.change = change;
    setTimeout(() => delete tr.dataset.change, MARK_MS);
  }

  private paged(): void {
    this.previous.disabled = this.after === undefined;
    this.next.disabled = this.nextAfter === undefined;
    const n = this.rows.size;
    this.summary.textContent = n === 0 ? 'No plants here.' : `${n} plant${n === 1 ? '' : 's'} on this page.`;
  }

  private forward(): void {
    if (this.nextAfter === undefined) return;
    this.earlier.push(this.after);
    void this.load(this.nextAfter);
  }

  private back(): void {
    void this.load(this.earlier.pop());
  }
}
