/**
 * A record read as `base` with `changes` on top, without copying `base`: a step's working copy of
 * thousands of step records or facts costs what the step changes (docs/decisions/0030-long-runs-per-step-cost.md).
 * Reads by key (`view[key]`, `key in view`, `Object.hasOwn`) cost the same as on a plain object;
 * enumerating the view costs its size, as it would on a copy. Writes land in `changes`.
 */
export function overlay<T>(base: Readonly<Record<string, T>>, changes: Record<string, T>): Record<string, T> {
  const parts: Parts = { base, changes };
  const view = new Proxy(parts, LAYERED) as unknown as Record<string, T>;
  views.set(view, parts);
  return view;
}

interface Parts {
  base: Readonly<Record<string, unknown>>;
  changes: Record<string, unknown>;
}

/**
 * The traps every view shares, reading its parts from the proxy's target (one handler for all
 * views: a step makes several, and closures per view were a measurable part of its cost,
 * docs/decisions/0059-short-path.md). The target's own two fields are never read as keys of the view.
 */
const LAYERED: ProxyHandler<Parts> = {
  get: (parts, key) => Reflect.get(ownerOf(parts, key), key),
  has: (parts, key) => Reflect.has(parts.changes, key) || Reflect.has(parts.base, key),
  set: (parts, key, value) => Reflect.set(parts.changes, key, value),
  getOwnPropertyDescriptor: (parts, key) => {
    const found = Reflect.getOwnPropertyDescriptor(ownerOf(parts, key), key);
    // Reported configurable: the view's own target has none of these keys.
    return found ? { ...found, configurable: true } : undefined;
  },
  ownKeys: (parts) => [...new Set([...Reflect.ownKeys(parts.base), ...Reflect.ownKeys(parts.changes)])],
  defineProperty: (parts, key, descriptor) => Reflect.defineProperty(parts.changes, key, descriptor),
  deleteProperty: () => false,
};

const ownerOf = (parts: Parts, key: string | symbol) =>
  Object.hasOwn(parts.changes, key) ? parts.changes : parts.base;

const views = new WeakMap<object, Parts>();

/**
 * A reader of `record`'s own entries by key that, on a view `overlay` made, reads its two plain
 * records without the view's traps: a scan of every open step's record and its dependencies' at
 * every step went through a trap per read (docs/decisions/0059-short-path.md).
 */
export function ownReader<T>(record: Readonly<Record<string, T>>): (key: string) => T | undefined {
  const parts = views.get(record) as { base: Readonly<Record<string, T>>; changes: Record<string, T> } | undefined;
  if (parts === undefined) return (key) => (Object.hasOwn(record, key) ? record[key] : undefined);
  const { base, changes } = parts;
  return (key) => (Object.hasOwn(changes, key) ? changes[key] : Object.hasOwn(base, key) ? base[key] : undefined);
}

/** The base and the changes of a view `overlay` made, or undefined for any other record. */
export function overlayParts<T>(
  record: Readonly<Record<string, T>>,
): { base: Readonly<Record<string, T>>; changes: Readonly<Record<string, T>> } | undefined {
  return views.get(record) as { base: Record<string, T>; changes: Record<string, T> } | undefined;
}
