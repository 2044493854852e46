// The conflict view of an edit refused with 412: the user's version and the store's side by
// side, in the same dialog, and the two ways out.
import type { NewPlant, Plant } from '../../../src/client/index.js';
import { h } from '../dom.js';
import { told } from '../session.js';

export interface Choices {
  /** Send mine again, against their ETag; resolves to a message when that fails too. */
  keepMine(): Promise<string | undefined>;
  takeTheirs(): void;
}

function version(title: string, plant: Plant): HTMLElement {
  const id = `v-${Math.random().toString(36).slice(2, 8)}`;
  return h(
    'section',
    { 'aria-labelledby': id },
    h('h3', { id }, title),
    h('dl', {}, h('dt', {}, 'Name'), h('dd', {}, plant.name), h('dt', {}, 'Tag'), h('dd', {}, plant.tag ?? '(none)')),
  );
}

export function showConflict(dialog: HTMLDialogElement, mine: Plant, theirs: NewPlant, choices: Choices): void {
  const error = h('p', { role: 'alert', className: 'alert' });
  const keep = h('button', { type: 'button' }, 'Keep mine');
  keep.addEventListener('click', async () => {
    keep.disabled = true;
    error.textContent = (await told(choices.keepMine)) ?? '';
    keep.disabled = false;
  });
  const heading = dialog.querySelector('h2')!;
  heading.textContent = 'Someone else changed this plant';
  dialog.replaceChildren(
    heading,
    h('p', {}, 'It changed after you opened it. Keep your version over theirs, or take theirs and drop yours.'),
    h('div', { className: 'versions' }, version('Your version', mine), version('Their version', theirs)),
    error,
    h(
      'div',
      { className: 'actions' },
      keep,
      h('button', { type: 'button', className: 'plain', onclick: () => choices.takeTheirs() }, 'Take theirs'),
    ),
  );
  keep.focus();
}
