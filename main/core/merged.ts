// A copy of an object with more fields, for the copies made of every request's row and patch (the
// ledger, the lifecycle, the results): written `{ ...row, ...more }`, once such a line is optimized,
// Node 20's V8 gives each copy a map (hidden class) of its own, in the old generation; over the
// start's sweep of the results that filled it with maps and ran full collections (docs/BENCHMARKS.md,
// the sixth round). Object.assign onto a fresh literal keeps one map for copies of one shape. Small
// literals put together once per request (intake's audit details, say) are not such copies.
export function merged<A extends object, B extends object>(base: A, more: B): A & B {
  return Object.assign({}, base, more);
}
