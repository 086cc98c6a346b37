/**
 * The sessions of `langgraph-replan mcp --http` (docs/decisions/0063-http-sessions.md): each client
 * that sends `initialize` gets a session of its own, kept here by id, so the server knows the client
 * and can reach it later on the session's stream (sampling, elicitation). The map is bounded — a
 * client that never ends its session (most just drop the connection) must not grow it without end —
 * and a session idle with nothing open is closed after `idleMs`.
 */

/** Sessions kept at once; one more closes the least recently used. */
export const MAX_SESSIONS = 64;
/** A session with no request and no stream open for this long is closed. */
export const SESSION_IDLE_MS = 15 * 60_000;

/** What the map needs of a session: a way to close it. */
export interface Closable {
  close(): Promise<void>;
}

interface Entry<S> {
  session: S;
  /** Requests and streams open on the session now: while any is, it is not idle. */
  open: number;
  lastUsed: number;
}

export interface HttpSessionsOptions {
  max?: number;
  idleMs?: number;
  now?: () => number;
}

export class HttpSessions<S extends Closable> {
  /** In order of last use, the least recent first (a use moves an entry to the end). */
  readonly #entries = new Map<string, Entry<S>>();
  readonly #max: number;
  readonly #idleMs: number;
  readonly #now: () => number;

  constructor(options: HttpSessionsOptions = {}) {
    this.#max = options.max ?? MAX_SESSIONS;
    this.#idleMs = options.idleMs ?? SESSION_IDLE_MS;
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The ids, the least recently used first. */
  ids(): string[] {
    return [...this.#entries.keys()];
  }

  /** Keeps `session` under `id`, first closing the least recently used session if the map is full. */
  add(id: string, session: S): void {
    while (this.#entries.size >= this.#max) this.#close(this.#evictable());
    this.#entries.set(id, { session, open: 0, lastUsed: this.#now() });
  }

  /**
   * The session `id` for one request, or undefined for none: it counts as open (not idle, evicted
   * last) until `done` is called, once, when the request's response closes.
   */
  use(id: string): { session: S; done: () => void } | undefined {
    const entry = this.#entries.get(id);
    if (!entry) return undefined;
    this.#entries.delete(id);
    this.#entries.set(id, entry);
    entry.open += 1;
    entry.lastUsed = this.#now();
    let finished = false;
    const done = () => {
      if (finished) return;
      finished = true;
      entry.open -= 1;
      entry.lastUsed = this.#now();
    };
    return { session: entry.session, done };
  }

  /** Drops `id` from the map without closing it (the session closed itself: DELETE, or its transport closed). */
  forget(id: string): void {
    this.#entries.delete(id);
  }

  /** Closes every session idle for `idleMs` with nothing open. */
  sweep(): void {
    const now = this.#now();
    for (const [id, entry] of [...this.#entries])
      if (entry.open === 0 && now - entry.lastUsed >= this.#idleMs) this.#close(id);
  }

  async closeAll(): Promise<void> {
    const all = [...this.#entries.values()];
    this.#entries.clear();
    // Called on the way out: a session that fails to close must not stop the others, nor the exit.
    await Promise.allSettled(all.map((entry) => entry.session.close()));
  }

  /** The least recently used session with nothing open, else the least recently used of all. */
  #evictable(): string {
    for (const [id, entry] of this.#entries) if (entry.open === 0) return id;
    return this.#entries.keys().next().value as string;
  }

  #close(id: string): void {
    const entry = this.#entries.get(id);
    this.#entries.delete(id);
    // Closing ends the session's streams; a failure there leaves nothing of ours to clean.
    void entry?.session.close().catch(() => undefined);
  }
}
