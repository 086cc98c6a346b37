/**
 * Untrusted text looked up by value instead of scanned: a long run holds thousands of facts, and
 * the capability guard asks, for each literal a side-effecting step passes, whether some text
 * holds it (`occurs`). Texts are filed by their words; a value is looked for only in the texts
 * that hold its rarest word, then checked with `occurs` itself, so the answer is the scan's
 * (docs/decisions/0058-incremental-taint-index.md).
 */
import { occurs, wordsOf } from "./words.js";

export interface IndexedText {
  readonly text: string;
}

export class TextIndex<T extends IndexedText> {
  private readonly byWord = new Map<string, Set<T>>();
  private readonly all = new Set<T>();

  get size(): number {
    return this.all.size;
  }

  add(entry: T): void {
    this.all.add(entry);
    for (const word of wordsOf(entry.text)) {
      let holders = this.byWord.get(word);
      if (holders === undefined) this.byWord.set(word, (holders = new Set()));
      holders.add(entry);
    }
  }

  remove(entry: T): void {
    if (!this.all.delete(entry)) return;
    for (const word of wordsOf(entry.text)) {
      const holders = this.byWord.get(word);
      holders?.delete(entry);
      if (holders?.size === 0) this.byWord.delete(word);
    }
  }

  /** An entry `needle` occurs in (as `occurs` reads it) that `accept` takes, or undefined. */
  find(needle: string, accept: (entry: T) => boolean = () => true): T | undefined {
    for (const entry of this.candidates(needle)) if (occurs(needle, entry.text) && accept(entry)) return entry;
    return undefined;
  }

  /** The texts holding the needle's rarest word; every text when it has none (all punctuation). */
  private candidates(needle: string): Iterable<T> {
    let fewest: Set<T> | undefined;
    for (const word of wordsOf(needle)) {
      const holders = this.byWord.get(word);
      if (holders === undefined) return [];
      if (fewest === undefined || holders.size < fewest.size) fewest = holders;
    }
    return fewest ?? this.all;
  }
}
