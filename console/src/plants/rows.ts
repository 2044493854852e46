// The rules of the list the page shows, apart from the page: how ids compare (exactly, past
// 2^53), which plants pass the filters, and which belong to the page on screen.
import type { NewPlant } from '../../../src/client/index.js';

export interface Filters {
  tags: string[];
  q: string;
}

/** A page of the list: the plants after `after` (none: from the first), up to `last` when more follow. */
export interface PageBounds {
  after: string | undefined;
  last: string | undefined;
  hasNext: boolean;
}

export const idOf = (plant: { id: number | bigint }): string => String(plant.id);
export const compareIds = (a: string, b: string): number =>
  BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0;

/**
 * The words of a name or a search, close to the store's rule (compatibility forms, case and the
 * common accents ignored); the store's answer to a search is the authority, this only decides
 * whether a plant that changed live still belongs to the page.
 */
export function words(text: string): string[] {
  const folded = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/ß/g, 'ss');
  return folded.split(/[^\p{L}\p{N}\p{M}]+/u).filter(Boolean);
}

export function passes(plant: NewPlant, filters: Filters): boolean {
  if (filters.tags.length > 0 && (plant.tag === undefined || !filters.tags.includes(plant.tag))) return false;
  if (filters.q === '') return true;
  const name = new Set(words(plant.name));
  return words(filters.q).every((w) => name.has(w));
}

/** Whether a plant of this id sits on the page (a plant past the last one of a full page belongs to the next). */
export function onPage(id: string, bounds: PageBounds): boolean {
  if (bounds.after !== undefined && compareIds(id, bounds.after) <= 0) return false;
  return !bounds.hasNext || bounds.last === undefined || compareIds(id, bounds.last) <= 0;
}
