// The console's views once signed in, and the navigation between them: switching keeps each
// view as it is (the live list goes on following while the import runs).
import { h } from './dom.js';

export interface View {
  element: HTMLElement;
  /** Told each time the view is shown. */
  shown?(): void;
}

export function showViews(main: HTMLElement, views: Record<string, View>): void {
  const panel = h('div');
  const buttons = Object.entries(views).map(([name, view]) =>
    h('button', { type: 'button', className: 'plain', onclick: () => show(name, view) }, name),
  );
  const show = (name: string, view: View) => {
    for (const b of buttons) {
      if (b.textContent === name) b.setAttribute('aria-current', 'page');
      else b.removeAttribute('aria-current');
    }
    panel.replaceChildren(view.element);
    view.shown?.();
  };
  main.replaceChildren(h('nav', { 'aria-label': 'Views', className: 'views actions' }, ...buttons), panel);
  const [first] = Object.entries(views);
  if (first) show(...first);
}
