import type Database from 'better-sqlite3';

/**
 * What FTS5's structure record (rowid 10 of plants_fts_data) says of the search index: how many
 * segments a search seeks in, and how many leaves FTS5 has ever written to new segments. The
 * record holds a 4-byte cookie, FTS5_STRUCTURE_V2's 4-byte mark if present, then varints:
 * levels, segments, and that counter.
 */
export function ftsStructure(db: Database.Database): { segments: number; leavesWritten: number } {
  const { block } = db.prepare<[], { block: Buffer }>('SELECT block FROM plants_fts_data WHERE id = 10').get()!;
  let at = block.subarray(4, 8).equals(Buffer.from([0xff, 0, 0, 1])) ? 8 : 4;
  const varint = () => {
    let value = 0;
    for (let n = 0; n < 8; n++) {
      const byte = block[at++]!;
      value = value * 128 + (byte & 0x7f);
      if (byte < 0x80) return value;
    }
    return value * 256 + block[at++]!;
  };
  varint();
  return { segments: varint(), leavesWritten: varint() };
}
