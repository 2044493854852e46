// The import view: a file in the export's format goes in by batches, with a progress bar (the
// share of the file read), the counts of created, unchanged and refused lines, and the first
// problems with their line numbers. The work is done in slices (a batch of 1,000 lines parsed,
// then the network), so the page answers clicks throughout.
import { field, h } from '../dom.js';
import type { Session } from '../session.js';
import { batchesOf, type Problem } from './batches.js';
import { importBatch, type Counts } from './importer.js';
import { fileLines } from './lines.js';

/** How many problems are listed; the count says how many there were. */
const FIRST_PROBLEMS = 10;

export class ImportView {
  readonly element: HTMLElement;
  private readonly file = field('NDJSON file', { name: 'file', type: 'file', accept: '.ndjson,.jsonl,.json,.txt' });
  private readonly start = h('button', { type: 'submit' }, 'Start import');
  private readonly progress = h('progress', { id: 'import-progress', max: 1, value: 0 });
  private readonly state = h('p', { role: 'status' }, 'No import yet.');
  private readonly counts = h('dl', { className: 'counts' });
  private readonly problems = h('ol', { 'aria-labelledby': 'problems-heading' });

  constructor(private readonly session: Session) {
    const run = (e: Event) => {
      e.preventDefault();
      const file = this.file.input.files?.[0];
      if (file) void this.run(file);
    };
    this.element = h(
      'section',
      { 'aria-labelledby': 'import-heading' },
      h('h2', { id: 'import-heading' }, 'Import'),
      h(
        'p',
        {},
        'A file in the format of plant-store export: one plant a line, as JSON. A plant the store holds already is left as it is.',
      ),
      h('form', { onsubmit: run }, this.file.wrap, h('div', { className: 'actions' }, this.start)),
      h('label', { for: 'import-progress' }, 'Progress'),
      this.progress,
      this.state,
      this.counts,
      h('h3', { id: 'problems-heading' }, 'First problems'),
      this.problems,
    );
  }

  private async run(file: File): Promise<void> {
    const counts: Counts = { created: 0, unchanged: 0, refused: 0 };
    const began = performance.now();
    let problems = 0;
    const problem = (p: Problem) => {
      if (++problems <= FIRST_PROBLEMS) this.problems.append(h('li', {}, `line ${p.line}: ${p.message}`));
    };
    this.start.disabled = true;
    this.problems.replaceChildren();
    this.progress.max = Math.max(file.size, 1);
    this.progress.value = 0;
    const invalid = (p: Problem) => {
      counts.refused++;
      problem(p);
    };
    try {
      for await (const batch of batchesOf(fileLines(file), invalid)) {
        await importBatch(this.session, batch.items, counts, problem);
        this.progress.value = batch.through;
        const done = Math.floor((100 * batch.through) / this.progress.max);
        this.show(counts, `Importing ${file.name}: ${done}% done.`);
      }
      const seconds = ((performance.now() - began) / 1000).toFixed(1);
      this.show(
        counts,
        `Imported ${file.name} in ${seconds} s${problems > FIRST_PROBLEMS ? `; ${problems} problems, the first ${FIRST_PROBLEMS} listed` : ''}.`,
      );
    } catch (err) {
      this.show(counts, `Stopped: ${(err as Error).message}`);
    } finally {
      this.start.disabled = false;
    }
  }

  private show(counts: Counts, state: string): void {
    this.state.textContent = state;
    const item = (name: string, n: number) => [h('dt', {}, name), h('dd', {}, n.toLocaleString('en'))];
    this.counts.replaceChildren(
      ...item('Created', counts.created),
      ...item('Unchanged', counts.unchanged),
      ...item('Refused', counts.refused),
    );
  }
}
