/**
 * The text of a run's records (its facts, its steps' errors), filed by word and kept in step with
 * the records instead of gathered again at each review. A run merges its records in place, so one
 * object holds them all run long; each review brings the index up to date by one identity check
 * per key and files only the values that changed since the last (docs/decisions/0058-incremental-taint-index.md).
 */
import { TextIndex, type IndexedText } from "./text-index.js";

/** One piece of a record's text, with the key it came from and what the index was told of it. */
export interface RecordText<M> extends IndexedText {
  readonly key: string;
  readonly meta: M;
}

/** How a record's value reads: its texts, each with the index (`shelf`) it is filed on. */
export type TextsOf<V, M> = (key: string, value: V) => readonly { text: string; meta: M; shelf: number }[];

/** A record's texts on `shelves` indexes (e.g. trusted and untrusted text), kept up to date by `sync`. */
export class RecordTexts<V, M> {
  readonly shelves: TextIndex<RecordText<M>>[];
  private readonly seen = new Map<string, { value: V; filed: [number, RecordText<M>][] }>();

  constructor(
    shelves: number,
    private readonly textsOf: TextsOf<V, M>,
  ) {
    this.shelves = Array.from({ length: shelves }, () => new TextIndex<RecordText<M>>());
  }

  /** Files what changed since the last call; false when keys went missing (the caller builds anew). */
  sync(record: Readonly<Record<string, V>>): boolean {
    let count = 0;
    for (const key in record) {
      count += 1;
      const value = record[key]!;
      const known = this.seen.get(key);
      if (known?.value === value) continue;
      for (const [shelf, entry] of known?.filed ?? []) this.shelves[shelf]!.remove(entry);
      const filed: [number, RecordText<M>][] = [];
      for (const { text, meta, shelf } of this.textsOf(key, value)) {
        const entry: RecordText<M> = { text, key, meta };
        this.shelves[shelf]!.add(entry);
        filed.push([shelf, entry]);
      }
      this.seen.set(key, { value, filed });
    }
    return count === this.seen.size;
  }
}

/**
 * The index of `record`, remembered by the record object and synced on each call. A record that is
 * a copy (a run that does not merge in place) gets its own; one that lost keys is read anew.
 */
export function recordTexts<V, M>(
  cache: WeakMap<object, RecordTexts<V, M>>,
  record: Readonly<Record<string, V>>,
  make: () => RecordTexts<V, M>,
): RecordTexts<V, M> {
  let index = cache.get(record);
  if (index === undefined || !index.sync(record)) {
    index = make();
    index.sync(record);
    cache.set(record, index);
  }
  return index;
}
