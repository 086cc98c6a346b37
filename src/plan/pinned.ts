/**
 * A record as it stands now, kept so while the record is changed in place. The step-records and
 * facts channels merge their writes into one object for the whole run (runtime/delta-channel.ts),
 * and an attempt still in flight when they do must go on reading the records it started from.
 * Copying them per attempt cost a run time proportional to its length at every step
 * (docs/decisions/0030-long-runs-per-step-cost.md); a pin costs the keys written while it is held.
 */
const ABSENT = Symbol("absent");
type Saved = Map<string, unknown>;

/** The pins held on each record: what each had before a write changed it. */
const pins = new WeakMap<object, Set<Saved>>();

/**
 * A read-only view of `record` as it is now: later in-place writes do not show in it until `release`,
 * after which it reads the record as it is. Key order may differ from the record's (lookups only).
 */
export function pin<T>(record: Readonly<Record<string, T>>): {
  view: Readonly<Record<string, T>>;
  release: () => void;
} {
  const saved: Saved = new Map();
  let held = pins.get(record);
  if (!held) pins.set(record, (held = new Set()));
  held.add(saved);
  const kept = (key: string | symbol) => typeof key === "string" && saved.has(key);
  const view = new Proxy<Record<string, T>>(
    {},
    {
      get: (_, key) => (kept(key) ? present(saved.get(key as string)) : Reflect.get(record, key)),
      has: (_, key) => (kept(key) ? saved.get(key as string) !== ABSENT : Reflect.has(record, key)),
      getOwnPropertyDescriptor: (_, key) => {
        if (kept(key)) {
          const value = saved.get(key as string);
          return value === ABSENT ? undefined : { value, writable: false, enumerable: true, configurable: true };
        }
        const found = Reflect.getOwnPropertyDescriptor(record, key);
        // Reported configurable: the view's own target has none of these keys.
        return found ? { ...found, configurable: true } : undefined;
      },
      ownKeys: () => {
        const keys = Reflect.ownKeys(record).filter((key) => !kept(key) || saved.get(key as string) !== ABSENT);
        for (const [key, value] of saved) if (value !== ABSENT && !Object.hasOwn(record, key)) keys.push(key);
        return keys;
      },
      set: () => false,
      defineProperty: () => false,
      deleteProperty: () => false,
    },
  );
  const release = () => {
    held.delete(saved);
    saved.clear();
  };
  return { view, release };
}

/** Called by an in-place merge before it writes `keys` of `record`: every pin keeps what it had. */
export function beforeWriting(record: object, keys: Iterable<string>): void {
  const held = pins.get(record);
  if (held === undefined || held.size === 0) return;
  for (const key of keys) {
    const before = Object.hasOwn(record, key) ? (record as Record<string, unknown>)[key] : ABSENT;
    for (const saved of held) if (!saved.has(key)) saved.set(key, before);
  }
}

const present = (value: unknown) => (value === ABSENT ? undefined : value);
