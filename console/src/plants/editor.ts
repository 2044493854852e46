// Creating, editing and deleting a plant, each in a dialog. An edit sends the ETag it read as
// If-Match, so it never overwrites a change it has not seen: on 412 the dialog shows both
// versions side by side and the user keeps theirs (sent against the other's ETag) or takes the other.
import type { NewPlant, Plant } from '../../../src/client/index.js';
import { field, h, modal } from '../dom.js';
import { refusal, told, type Session } from '../session.js';
import { showConflict } from './conflict.js';

/** What a dialog tells the list once the store has the change. */
export type Saved = (id: string, plant: NewPlant | undefined) => void;

const plantOf = (name: HTMLInputElement, tag: HTMLInputElement): Plant => ({
  name: name.value,
  ...(tag.value !== '' && { tag: tag.value }),
});

/** A dialog's form: its fields, a message region, and its button (Save) and Cancel. */
function form(
  dialog: HTMLDialogElement,
  fields: HTMLElement[],
  save: () => Promise<string | undefined>,
  button = h('button', { type: 'submit' }, 'Save'),
) {
  const error = h('p', { role: 'alert', className: 'alert' });
  const submit = button;
  const el = h(
    'form',
    {
      onsubmit: async (e: Event) => {
        e.preventDefault();
        submit.disabled = true;
        error.textContent = (await told(save)) ?? '';
        submit.disabled = false;
      },
    },
    ...fields,
    error,
    h(
      'div',
      { className: 'actions' },
      submit,
      h('button', { type: 'button', className: 'plain', onclick: () => dialog.close() }, 'Cancel'),
    ),
  );
  dialog.append(el);
  // Shown once filled, so that it gives the focus to its field marked autofocus.
  dialog.showModal();
}

export function createPlant(session: Session, saved: Saved): void {
  const dialog = modal('New plant');
  const id = field('Id', { name: 'id', autofocus: true, inputMode: 'numeric', required: true, pattern: '-?[0-9]+' });
  const name = field('Name', { name: 'name', required: true, maxLength: 200 });
  const tag = field('Tag', { name: 'tag', maxLength: 64 });
  form(dialog, [id.wrap, name.wrap, tag.wrap], async () => {
    const plant = { id: BigInt(id.input.value), ...plantOf(name.input, tag.input) };
    const { error, response } = await session.client.POST('/plants', { body: plant });
    if (!response.ok) return refusal(response, error);
    dialog.close();
    saved(id.input.value, plant);
  });
}

// The plant as the store holds it now, with its ETag: never a copy from the browser's cache.
const readPlant = (session: Session, id: string) =>
  session.client.GET('/plants/{id}', { params: { path: { id: BigInt(id) } }, cache: 'no-store' });

/** Reads the plant (for its ETag), then edits it. */
export async function editPlant(session: Session, id: string, saved: Saved): Promise<string | undefined> {
  const read = await readPlant(session, id);
  if (!read.data) return refusal(read.response, read.error);
  let etag = read.response.headers.get('etag') ?? '';
  const dialog = modal(`Edit plant ${id}`);
  const name = field('Name', { name: 'name', autofocus: true, required: true, maxLength: 200, value: read.data.name });
  const tag = field('Tag', { name: 'tag', maxLength: 64, value: read.data.tag ?? '' });
  const put = async (mine: Plant): Promise<string | undefined> => {
    const { data, error, response } = await session.client.PUT('/plants/{id}', {
      params: { path: { id: BigInt(id) } },
      headers: { 'if-match': etag },
      body: mine,
    });
    if (response.status === 412) return conflict(mine);
    if (!data) return refusal(response, error);
    dialog.close();
    saved(id, { id: BigInt(id), ...data });
  };
  const conflict = async (mine: Plant): Promise<string | undefined> => {
    const theirs = await readPlant(session, id);
    if (!theirs.data) return refusal(theirs.response, theirs.error);
    etag = theirs.response.headers.get('etag') ?? '';
    showConflict(dialog, mine, theirs.data, {
      keepMine: () => put(mine),
      takeTheirs: () => {
        dialog.close();
        saved(id, theirs.data);
      },
    });
  };
  form(dialog, [name.wrap, tag.wrap], () => put(plantOf(name.input, tag.input)));
}

export function deletePlant(session: Session, plant: NewPlant, saved: Saved): void {
  const id = String(plant.id);
  const dialog = modal(`Delete ${plant.name}?`, h('p', {}, `Plant ${id} goes from the store.`));
  const remove = async () => {
    const { error, response } = await session.client.DELETE('/plants/{id}', { params: { path: { id: BigInt(id) } } });
    if (!response.ok && response.status !== 404) return refusal(response, error);
    dialog.close();
    saved(id, undefined);
  };
  form(dialog, [], remove, h('button', { type: 'submit', className: 'danger' }, 'Delete'));
  // Cancel first: Enter on a dialog just opened must not delete.
  dialog.querySelector<HTMLButtonElement>('button.plain')?.focus();
}
