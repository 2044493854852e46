// The plants view: a page of the list at a time (keyset: each page starts after the last id of
// the one before, as the API's Link gives it), filtered by tag and searched by words. Live
// changes land here through `apply`, after a snapshot through `reconcile`.
import type { NewPlant } from '../../../src/client/index.js';
import type { Change } from '../../../src/client/follow.js';
import { nextQuery } from '../../../src/client/link.js';
import { field, h, showAlert } from '../dom.js';
import { refusal, told, type Session } from '../session.js';
import { createPlant, deletePlant, editPlant, type Saved } from './editor.js';
import { onPage, passes, type Filters } from './rows.js';
import { PlantTable } from './table.js';

const PAGE_SIZE = 20;

export class PlantList {
  readonly element: HTMLElement;
  private readonly table: PlantTable;
  private readonly summary = h('p', { className: 'muted', 'aria-live': 'polite' });
  private readonly previous = this.pageButton('Previous page', () => void this.load(this.earlier.pop()));
  private readonly next = this.pageButton('Next page', () => this.forward());
  private filters: Filters = { tags: [], q: '' };
  private after: string | undefined;
  private nextAfter: string | undefined;
  /** The cursors of the pages before this one, for Previous page. */
  private readonly earlier: (string | undefined)[] = [];

  constructor(private readonly session: Session) {
    this.table = new PlantTable('plants-heading', {
      edit: async (id) => showAlert((await told(() => editPlant(session, id, this.saved))) ?? ''),
      delete: (plant) => deletePlant(session, plant, this.saved),
    });
    this.element = h(
      'section',
      { 'aria-labelledby': 'plants-heading' },
      h('h2', { id: 'plants-heading' }, 'Plants'),
      this.filterForm(),
      h(
        'div',
        { className: 'actions' },
        h('button', { type: 'button', onclick: () => createPlant(session, this.saved) }, 'New plant'),
      ),
      this.table.element,
      this.summary,
      h('nav', { 'aria-label': 'Pages', className: 'actions' }, this.previous, this.next),
    );
  }

  /**
   * Shows the page after `after` (none: the first), or tells in the page's alert why it cannot:
   * the API's refusal (a 503, a 429 and when to try again) or no answer; the page shown stays.
   */
  async load(after: string | undefined): Promise<void> {
    showAlert((await told(() => this.read(after))) ?? '');
  }

  private async read(after: string | undefined): Promise<string | undefined> {
    const { tags, q } = this.filters;
    const query = {
      limit: PAGE_SIZE,
      ...(after !== undefined && { after: BigInt(after) }),
      ...(tags.length > 0 && { tag: tags }),
      ...(q !== '' && { q }),
    };
    const { data, error, response } = await this.session.client.GET('/plants', { params: { query } });
    if (!response.ok || !data) return refusal(response, error);
    this.after = after;
    this.nextAfter = new URLSearchParams(nextQuery(response.headers.get('link')) ?? '').get('after') ?? undefined;
    this.table.clear();
    for (const plant of data) this.table.put(plant);
    this.paged();
  }

  /** Shows this page again, as the store holds it now (the live stream could not say what changed). */
  reload(): Promise<void> {
    return this.load(this.after);
  }

  /** A change from the live stream: the row changes, comes or goes if it belongs to this page. */
  apply(change: Change): void {
    const id = String(change.id);
    const shown = this.table.plant(id) !== undefined;
    if (change.type === 'deleted' || !passes(change.plant!, this.filters)) this.table.remove(id);
    else if (shown) this.table.put(change.plant!, 'updated');
    else if (onPage(id, { after: this.after, last: this.table.last(), hasNext: this.nextAfter !== undefined })) {
      this.table.put(change.plant!, 'created');
      // The page keeps its size: its last plant now opens the next page.
      if (this.table.size > PAGE_SIZE) {
        this.table.drop(this.table.last()!);
        this.nextAfter = this.table.last();
      }
    }
    this.paged();
  }

  /** After a snapshot: which of the rows it looked for (`looked`) the store still holds, and as what. */
  reconcile(plants: Map<string, NewPlant>, looked: Set<string>): void {
    for (const id of looked) {
      const now = plants.get(id);
      const shown = this.table.plant(id);
      if (!shown) continue;
      if (!now || !passes(now, this.filters)) this.table.remove(id);
      else if (now.name !== shown.name || now.tag !== shown.tag) this.table.put(now, 'updated');
    }
    this.paged();
  }

  ids(): Set<string> {
    return this.table.ids();
  }

  /** What a dialog saved, shown at once (the live stream brings it too, to every tab). */
  private readonly saved: Saved = (id, plant) =>
    this.apply(plant ? { type: 'updated', id: BigInt(id), plant, position: 0, time: '' } : deletedChange(id));

  private filterForm(): HTMLFormElement {
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
    const submit = h('div', {}, h('button', { type: 'submit' }, 'Filter'));
    return h('form', { className: 'filters', role: 'search', onsubmit: filter }, tag.wrap, q.wrap, submit);
  }

  private pageButton(text: string, onclick: () => void): HTMLButtonElement {
    return h('button', { type: 'button', className: 'plain', onclick }, text);
  }

  private paged(): void {
    this.previous.disabled = this.after === undefined;
    this.next.disabled = this.nextAfter === undefined;
    const n = this.table.size;
    this.summary.textContent = n === 0 ? 'No plants here.' : `${n} plant${n === 1 ? '' : 's'} on this page.`;
  }

  private forward(): void {
    if (this.nextAfter === undefined) return;
    this.earlier.push(this.after);
    void this.load(this.nextAfter);
  }
}

const deletedChange = (id: string): Change => ({ type: 'deleted', id: BigInt(id), position: 0, time: '' });
