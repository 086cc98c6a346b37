/**
 * The threads a worker process runs at once (`concurrency`). The process takes one job more than
 * that from the queue: the next job's bookkeeping (its fetch, lock and checkpoint read) happens
 * while the others run, and it starts the moment a slot frees up, instead of every lane paying
 * for the queue between two runs.
 */
export interface Slots {
  /** A slot, or undefined when none freed up within `waitMs` (the job goes back to the queue). */
  acquire(waitMs: number): Promise<(() => void) | undefined>;
}

export function openSlots(size: number): Slots {
  let free = size;
  const waiting: ((got: boolean) => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next(true);
    else free++;
  };
  const slot = () => {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      release();
    };
  };
  return {
    async acquire(waitMs) {
      if (free > 0) {
        free--;
        return slot();
      }
      const got = await new Promise<boolean>((resolve) => {
        const wake = (ok: boolean) => {
          clearTimeout(timer);
          resolve(ok);
        };
        const timer = setTimeout(() => {
          waiting.splice(waiting.indexOf(wake), 1);
          resolve(false);
        }, waitMs);
        waiting.push(wake);
      });
      return got ? slot() : undefined;
    },
  };
}
