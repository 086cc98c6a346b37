/** A fake clock: sleeps are recorded and advance time instantly. */
export function fakeClock(start = Date.parse("2026-01-01T00:00:00Z")) {
  let now = start;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    sleep: async (ms: number) => {
      sleeps.push(ms);
      now += ms;
    },
    advance: (ms: number) => {
      now += ms;
    },
  };
}
