// The table of the plants on screen, in id order: a row per plant with its Edit and Delete
// (labelled with the plant's name and id, for screen readers and the tests), rows put, replaced
// and removed as the page loads and as live changes land, each change marked for a moment.
import type { NewPlant } from '../../../src/client/index.js';
import { h } from '../dom.js';
import { compareIds, idOf } from './rows.js';

/** How long a changed row stays marked. */
const MARK_MS = 2000;

export interface RowActions {
  edit(id: string): void;
  delete(plant: NewPlant): void;
}

export class PlantTable {
  private readonly rows = new Map<string, { plant: NewPlant; tr: HTMLTableRowElement }>();
  private readonly tbody = h('tbody');
  readonly element: HTMLTableElement;

  constructor(
    labelledBy: string,
    private readonly actions: RowActions,
  ) {
    const th = (text: string) => h('th', { scope: 'col' }, text);
    const actionsHeader = h('th', { scope: 'col' }, h('span', { className: 'visually-hidden' }, 'Actions'));
    this.element = h(
      'table',
      { 'aria-labelledby': labelledBy },
      h('thead', {}, h('tr', {}, th('Id'), th('Name'), th('Tag'), actionsHeader)),
      this.tbody,
    );
  }

  get size(): number {
    return this.rows.size;
  }

  plant(id: string): NewPlant | undefined {
    return this.rows.get(id)?.plant;
  }

  ids(): Set<string> {
    return new Set(this.rows.keys());
  }

  /** The greatest id on screen. */
  last(): string | undefined {
    let last: string | undefined;
    for (const id of this.rows.keys()) if (last === undefined || compareIds(id, last) > 0) last = id;
    return last;
  }

  clear(): void {
    this.rows.clear();
    this.tbody.replaceChildren();
  }

  /** Puts the plant's row in id order, or replaces it in place; marked as `change` when given. */
  put(plant: NewPlant, change?: 'created' | 'updated'): void {
    const id = idOf(plant);
    const old = this.rows.get(id);
    const tr = this.row(plant);
    if (old) old.tr.replaceWith(tr);
    else {
      // The first row of a greater id, in the table's order (a removed row may still be fading).
      const before = [...this.tbody.rows].find(
        (r) => this.rows.has(r.dataset.id!) && compareIds(r.dataset.id!, id) > 0,
      );
      this.tbody.insertBefore(tr, before ?? null);
    }
    this.rows.set(id, { plant, tr });
    if (change) mark(tr, change);
  }

  /** Takes the row away at once: it has gone to another page, not from the store. */
  drop(id: string): void {
    this.rows.get(id)?.tr.remove();
    this.rows.delete(id);
  }

  /** Marks the row as deleted, then takes it away. */
  remove(id: string): void {
    const row = this.rows.get(id);
    if (!row) return;
    this.rows.delete(id);
    mark(row.tr, 'deleted');
    setTimeout(() => row.tr.remove(), MARK_MS / 2);
  }

  private row(plant: NewPlant): HTMLTableRowElement {
    const id = idOf(plant);
    const label = `${plant.name} (${id})`;
    const button = (text: string, className: string, onclick: () => void) =>
      h('button', { type: 'button', className, 'aria-label': `${text} ${label}`, onclick }, text);
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
          button('Edit', 'plain', () => this.actions.edit(id)),
          button('Delete', 'danger', () => this.actions.delete(plant)),
        ),
      ),
    );
  }
}

function mark(tr: HTMLTableRowElement, change: string): void {
  tr.dataset.change = change;
  setTimeout(() => delete tr.dataset.change, MARK_MS);
}
