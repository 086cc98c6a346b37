/**
 * A record read as `base` with `changes` on top, without copying `base`: a step's working copy of
 * thousands of step records or facts costs what the step changes (docs/decisions/0030-long-runs-per-step-cost.md).
 * Reads by key (`view[key]`, `key in view`, `Object.hasOwn`) cost the same as on a plain object;
 * enumerating the view costs its size, as it would on a copy. Writes land in `changes`.
 */
export function overlay<T>(base: Readonly<Record<string, T>>, changes: Record<string, T>): Record<string, T> {
  const owner = (key: string | symbol) => (Object.hasOwn(changes, key) ? changes : base);
  const view = new Proxy<Record<string, T>>(
    {},
    {
      get: (_, key) => Reflect.get(owner(key), key),
      has: (_, key) => Reflect.has(changes, key) || Reflect.has(base, key),
      set: (_, key, value) => Reflect.set(changes, key, value),
      getOwnPropertyDescriptor: (_, key) => {
        const found = Reflect.getOwnPropertyDescriptor(owner(key), key);
        // Reported configurable: the view's own target has none of these keys.
        return found ? { ...found, configurable: true } : undefined;
      },
      ownKeys: () => [...new Set([...Reflect.ownKeys(base), ...Reflect.ownKeys(changes)])],
      defineProperty: (_, key, descriptor) => Reflect.defineProperty(changes, key, descriptor),
      deleteProperty: () => false,
    },
  );
  parts.set(view, { base, changes });
  return view;
}

const parts = new WeakMap<object, { base: Readonly<Record<string, unknown>>; changes: Record<string, unknown> }>();

/** The base and the changes of a view `overlay` made, or undefined for any other record. */
export function overlayParts<T>(
  record: Readonly<Record<string, T>>,
): { base: Readonly<Record<string, T>>; changes: Readonly<Record<string, T>> } | undefined {
  return parts.get(record) as { base: Record<string, T>; changes: Record<string, T> } | undefined;
}
