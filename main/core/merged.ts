// A copy of an object with more fields. Not written `{ ...base, ...more }` or `{ ...base, field }`:
// once such a line is optimized, Node 20's V8 gives each copy a map (hidden class) of its own, in the
// old generation. On the request path and in the start's sweep over the results that filled it with
// maps and ran full collections (docs/BENCHMARKS.md, the sixth round); Object.assign onto a fresh
// literal keeps one map for copies of one shape.
export function merged<A extends object, B extends object>(base: A, more: B): A & B {
  return Object.assign({}, base, more);
}
