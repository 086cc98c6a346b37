/**
 * One `LISTEN` connection per worker process, for what callers announce: a job enqueued (so an
 * idle lane asks pg-boss at once instead of at its next poll) and an operator's stop request
 * (worker/stop-watch.ts). A dropped connection is reported to `onError`; both have a poll behind
 * them, so nothing waits for it longer than a poll.
 */
import { Client } from "pg";

export interface Listener {
  /** Calls `handler` with each notification's payload on `channel`. */
  on(channel: string, handler: (payload: string) => void): void;
  close(): Promise<void>;
}

export async function openListener(
  connectionString: string,
  channels: string[],
  onError: (error: unknown) => void,
): Promise<Listener> {
  const handlers = new Map<string, ((payload: string) => void)[]>();
  const client = new Client({ connectionString });
  client.on("error", onError);
  client.on("notification", (message) => {
    for (const handler of handlers.get(message.channel) ?? []) handler(message.payload ?? "");
  });
  await client.connect();
  for (const channel of channels) await client.query(`LISTEN ${channel}`);
  return {
    on: (channel, handler) => void handlers.set(channel, [...(handlers.get(channel) ?? []), handler]),
    close: () => client.end().catch(onError),
  };
}
