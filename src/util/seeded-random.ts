/**
 * A seeded generator of numbers in [0, 1) (mulberry32): small, fast and repeatable, so generated
 * sessions, benchmark files and randomized tests come out the same for the same seed and a failing
 * run can be replayed. Not for anything that must be unpredictable.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
