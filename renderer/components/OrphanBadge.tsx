// How a run that outlived a host restart is marked, on its card and its page alike.

/** What becomes of an orphan that ends by itself (whether its operation has a reconcile check is
 *  not known while it runs). */
export const ORPHAN_ENDS_BY_ITSELF = 'if it ends by itself, the host checks whether it took effect where its operation can tell, else asks you';

export function OrphanBadge() {
  return <span className="badge badge-warn">Outlived a host restart: still running, watched</span>;
}
