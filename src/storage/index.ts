/**
 * The saver adapter for a checkpointer (storage/saver-adapter.ts), chosen by the saver's shape:
 * the first backend in `BACKENDS` that recognises it, else the one for any saver. A new backend
 * is a new file and one entry there.
 */
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { anySaverAdapter } from "./any-saver.js";
import { postgresAdapter } from "./postgres.js";
import type { Backend, SaverAdapter } from "./saver-adapter.js";
import { sqliteAdapter } from "./sqlite.js";

export type { ArchiveStore } from "./archive-store.js";
export type { StatusRow, StatusStore } from "./status-store.js";
export type {
  DeleteThreadResult,
  ListThreadsOptions,
  SaverAdapter,
  ThreadClaim,
  ThreadHeld,
  ThreadSummary,
} from "./saver-adapter.js";

const BACKENDS: readonly Backend[] = [sqliteAdapter, postgresAdapter];

const adapters = new WeakMap<BaseCheckpointSaver, SaverAdapter>();
const originals = new WeakMap<object, BaseCheckpointSaver>();

/** The adapter for the caller's saver (or for the saver behind a view made by `withDirectMethods`), one per saver. */
export function saverAdapter(saver: BaseCheckpointSaver): SaverAdapter {
  const own = originalSaver(saver);
  let adapter = adapters.get(own);
  if (!adapter) {
    adapter = BACKENDS.reduce<SaverAdapter | undefined>((found, backend) => found ?? backend(own), undefined);
    adapter ??= anySaverAdapter(own);
    adapters.set(own, adapter);
  }
  return adapter;
}

const views = new WeakMap<BaseCheckpointSaver, BaseCheckpointSaver>();

/**
 * The saver to compile with: a view of `saver` that answers its adapter's direct methods and
 * inherits everything else (the caller's object is not changed; the same view for the same
 * saver, so the thread lock still sees one checkpointer), or `saver` itself when there are none.
 */
export function withDirectMethods<S>(saver: S): S {
  if (typeof saver !== "object" || saver === null || originals.has(saver) || !isSaver(saver)) return saver;
  const known = views.get(saver);
  if (known) return known as S;
  const direct = Object.entries(saverAdapter(saver).direct);
  if (direct.length === 0) return saver;
  const view = Object.create(saver) as BaseCheckpointSaver;
  for (const [name, method] of direct) Object.defineProperty(view, name, { value: method });
  views.set(saver, view);
  originals.set(view, saver);
  return view as S;
}

/** The saver the caller passed, for a view made by `withDirectMethods` (anything else as it is). */
export function originalSaver<T>(saver: T): T {
  return (typeof saver === "object" && saver !== null ? (originals.get(saver) as T | undefined) : undefined) ?? saver;
}

/** A checkpointer by shape (any copy of LangGraph's base class has these). */
function isSaver(value: object): value is BaseCheckpointSaver {
  const v = value as Record<string, unknown>;
  return ["getTuple", "list", "put", "putWrites", "getDeltaChannelHistory"].every((m) => typeof v[m] === "function");
}
