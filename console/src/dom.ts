// Building the page's elements in code: no template strings turned into HTML (nothing a plant's
// name holds is ever parsed as markup) and no inline style or handler (the CSP forbids both).

export type Child = Node | string | false | null | undefined;
type Props = Record<string, unknown>;

/** An element with its properties, attributes (`aria-*`, `data-*`, `role`, `for`), listeners (`onclick`) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value as EventListener);
    else if (/^(aria-|data-|role$|for$)/.test(key)) el.setAttribute(key, String(value));
    else (el as unknown as Props)[key] = value;
  }
  el.append(...children.filter((c): c is Node | string => c !== false && c !== null && c !== undefined));
  return el;
}

/** The element of this id, which the page's HTML holds. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`the page has no #${id}`);
  return el as T;
}

/** A labelled input: the label names it for screen readers and for the tests. */
export function field(label: string, input: Props): { wrap: HTMLDivElement; input: HTMLInputElement } {
  const id = `f-${String(input.name)}-${Math.random().toString(36).slice(2, 8)}`;
  const el = h('input', { id, ...input });
  return { wrap: h('div', {}, h('label', { for: id }, label), el), input: el };
}

/** Tells the user, in the page's alert region (read out by screen readers), or clears it. */
export function showAlert(message = ''): void {
  byId('alert').textContent = message;
}

/** A modal dialog labelled by its heading, to show once filled; removed from the page once closed. */
export function modal(heading: string, ...content: Child[]): HTMLDialogElement {
  const id = `d-${Math.random().toString(36).slice(2, 8)}`;
  const dialog = h('dialog', { 'aria-labelledby': id }, h('h2', { id }, heading), ...content);
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  return dialog;
}
