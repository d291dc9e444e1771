// The allowlist as one spool sees it: only the operations listed for it (or for every spool). Everything
// a request of that spool meets (the gate, plans, the catalog) is given this view, so an operation of
// another spool is, to its sandbox, no operation at all (`unknown_op`, like a name never written).
import { opVisibleTo, type Allowlist } from './types';

const views = new WeakMap<Allowlist, Map<string, Allowlist>>();

export function allowlistFor(allowlist: Allowlist, spool: string): Allowlist {
  let bySpool = views.get(allowlist);
  if (!bySpool) views.set(allowlist, (bySpool = new Map()));
  let view = bySpool.get(spool);
  if (!view) {
    view = {
      ...allowlist,
      operations: new Map([...allowlist.operations].filter(([, op]) => opVisibleTo(op, spool))),
      disabled: new Map([...allowlist.disabled].filter(([, op]) => opVisibleTo(op, spool))),
    };
    bySpool.set(spool, view);
  }
  return view;
}
