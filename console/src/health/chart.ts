// A line chart of the last minutes, drawn in SVG (no charting library: a few polylines on a
// scale). Its colours come from the style sheet (classes), never a style attribute: the CSP has
// no 'unsafe-inline'. For screen readers it is an image named by its title and latest values,
// which its legend also shows as text.
import { h } from '../dom.js';

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 300;
const HEIGHT = 100;

export interface Series {
  name: string;
  /** Its colour's class in console.css: line-1 to line-3. */
  line: string;
  values: (number | undefined)[];
}

function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attributes: Record<string, string>,
): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attributes)) el.setAttribute(k, v);
  return el;
}

const format = (n: number | undefined, unit: string) =>
  n === undefined ? 'none' : `${n.toLocaleString('en', { maximumFractionDigits: n < 10 ? 2 : 0 })}${unit}`;

export class Chart {
  readonly element: HTMLElement;
  private readonly plot = svg('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, preserveAspectRatio: 'none', role: 'img' });
  private readonly legend = h('ul', { className: 'legend' });
  private readonly top = h('span', { className: 'muted' });

  constructor(
    private readonly title: string,
    private readonly unit: string,
    private readonly capacity: number,
  ) {
    this.element = h(
      'figure',
      { className: 'chart' },
      h('figcaption', {}, title, ' ', this.top),
      this.plot,
      this.legend,
    );
    this.draw([]);
  }

  draw(series: Series[]): void {
    const max = Math.max(1, ...series.flatMap((s) => s.values.filter((v): v is number => v !== undefined)));
    const x = (i: number) => (WIDTH * i) / Math.max(this.capacity - 1, 1);
    const y = (v: number) => HEIGHT - (HEIGHT * v) / max;
    const lines = series.map((s) => {
      const start = this.capacity - s.values.length;
      const points = s.values.flatMap((v, i) => (v === undefined ? [] : [`${x(start + i)},${y(v)}`]));
      return svg('polyline', { points: points.join(' '), class: s.line, 'vector-effect': 'non-scaling-stroke' });
    });
    this.plot.replaceChildren(
      svg('line', { x1: '0', y1: `${HEIGHT}`, x2: `${WIDTH}`, y2: `${HEIGHT}`, class: 'axis' }),
      ...lines,
    );
    this.top.textContent = `(top of the scale: ${format(max, this.unit)})`;
    const latest = series.map((s) => `${s.name} ${format(s.values.at(-1), this.unit)}`);
    this.plot.setAttribute('aria-label', `${this.title}, latest: ${latest.join(', ') || 'no figures yet'}`);
    this.legend.replaceChildren(...series.map((s, i) => h('li', { className: s.line }, latest[i]!)));
  }
}
