/**
 * How the capability guard matches a value inside text: as a whole token, so "4111" is not found
 * in "41112" (docs/decisions/0013-untrusted-facts-do-not-steer-the-plan.md). Word characters are
 * read one UTF-16 unit at a time, as `occurs` reads its neighbours.
 */

const WORD = /[\p{L}\p{N}_]/u;

/** A letter, a digit or `_`; the ASCII range answered without the regular expression (a text is read once per unit). */
export function isWordChar(c: string): boolean {
  const code = c.charCodeAt(0);
  if (code < 128)
    return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;
  return WORD.test(c);
}

/** `needle` in `text` as a whole token: "4111" is not found in "41112". */
export function occurs(needle: string, text: string): boolean {
  let at = text.indexOf(needle);
  while (at >= 0) {
    const before = at === 0 ? "" : text[at - 1]!;
    const after = text[at + needle.length] ?? "";
    if (!isWordChar(before) || !isWordChar(needle[0]!)) {
      if (!isWordChar(after) || !isWordChar(needle[needle.length - 1]!)) return true;
    }
    at = text.indexOf(needle, at + 1);
  }
  return false;
}

/**
 * The maximal runs of word characters in `text`, each once. Wherever `occurs(needle, text)` holds,
 * every word of `needle` is a word of `text`: a word inside the needle is bounded by non-word
 * characters it carries, and one at its edge by the boundary `occurs` demands. So the words index
 * text exactly for `occurs` (text-index.ts).
 */
export function wordsOf(text: string): Set<string> {
  const out = new Set<string>();
  let start = -1;
  for (let i = 0; i <= text.length; i++) {
    const word = i < text.length && isWordChar(text[i]!);
    if (word && start < 0) start = i;
    else if (!word && start >= 0) {
      out.add(text.slice(start, i));
      start = -1;
    }
  }
  return out;
}
