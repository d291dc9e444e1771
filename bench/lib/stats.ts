// Small statistics and formatting helpers for the benchmark.

/** The q-th quantile (0..1) by linear interpolation between closest ranks (R's type 7). */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo]! + (s[hi]! - s[lo]!) * (pos - lo);
}

export interface Summary {
  n: number;
  min: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

export function summarize(values: readonly number[]): Summary {
  const n = values.length;
  return {
    n,
    min: n ? Math.min(...values) : NaN,
    p50: quantile(values, 0.5),
    p95: quantile(values, 0.95),
    p99: quantile(values, 0.99),
    max: n ? Math.max(...values) : NaN,
    mean: n ? values.reduce((a, b) => a + b, 0) / n : NaN,
  };
}

/** Rounds for the JSON output: enough digits to be useful, no float noise. */
export function round(x: number, digits = 2): number {
  if (!Number.isFinite(x)) return x;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export function roundSummary(s: Summary, digits = 2): Summary {
  return {
    n: s.n,
    min: round(s.min, digits),
    p50: round(s.p50, digits),
    p95: round(s.p95, digits),
    p99: round(s.p99, digits),
    max: round(s.max, digits),
    mean: round(s.mean, digits),
  };
}

export function ms(x: number): string {
  if (!Number.isFinite(x)) return '-';
  if (x >= 10_000) return `${(x / 1000).toFixed(1)} s`;
  if (x >= 1000) return `${(x / 1000).toFixed(2)} s`;
  if (x >= 100) return `${x.toFixed(0)} ms`;
  if (x >= 10) return `${x.toFixed(1)} ms`;
  return `${x.toFixed(2)} ms`;
}

export function sleep(msec: number): Promise<void> {
  return new Promise((r) => setTimeout(r, msec));
}

/** A deterministic pseudo-random generator (mulberry32), so that generated data is the same every run. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)]!;
}

/** Picks by weight: `[[weight, value], ...]`. */
export function weighted<T>(r: () => number, xs: readonly (readonly [number, T])[]): T {
  const total = xs.reduce((a, [w]) => a + w, 0);
  let x = r() * total;
  for (const [w, v] of xs) {
    if ((x -= w) < 0) return v;
  }
  return xs[xs.length - 1]![1];
}
