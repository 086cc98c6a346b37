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
  const view = new Proxy<Pinned>({ record, saved }, PINNED) as unknown as Readonly<Record<string, T>>;
  const release = () => {
    held.delete(saved);
    saved.clear();
  };
  return { view, release };
}

/** A pinned view's parts: the record, and what each key written since the pin had before. */
interface Pinned {
  record: Readonly<Record<string, unknown>>;
  saved: Saved;
}

const kept = (saved: Saved, key: string | symbol): key is string => typeof key === "string" && saved.has(key);

/**
 * The traps every pinned view shares, reading its parts from the proxy's target (one handler, no
 * closures per pin: a step pins its records, docs/decisions/0059-short-path.md). The target's own
 * two fields are never read as keys of the view.
 */
const PINNED: ProxyHandler<Pinned> = {
  get: ({ record, saved }, key) => (kept(saved, key) ? present(saved.get(key)) : Reflect.get(record, key)),
  has: ({ record, saved }, key) => (kept(saved, key) ? saved.get(key) !== ABSENT : Reflect.has(record, key)),
  getOwnPropertyDescriptor: ({ record, saved }, key) => {
    if (kept(saved, key)) {
      const value = saved.get(key);
      return value === ABSENT ? undefined : { value, writable: false, enumerable: true, configurable: true };
    }
    const found = Reflect.getOwnPropertyDescriptor(record, key);
    // Reported configurable: the view's own target has none of these keys.
    return found ? { ...found, configurable: true } : undefined;
  },
  ownKeys: ({ record, saved }) => {
    const keys = Reflect.ownKeys(record).filter((key) => !kept(saved, key) || saved.get(key) !== ABSENT);
    for (const [key, value] of saved) if (value !== ABSENT && !Object.hasOwn(record, key)) keys.push(key);
    return keys;
  },
  set: () => false,
  defineProperty: () => false,
  deleteProperty: () => false,
};

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
