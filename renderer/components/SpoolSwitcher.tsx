// Which spool a screen shows, when the home has several: one, or all of them. Shared by Activity,
// Approvals, Keys and Audit (the choice stays when moving between them).
import { chooseSpool, useChosenSpool, useSeveralSpools, useSpools } from '../stores/spool';

export function SpoolSwitcher() {
  const several = useSeveralSpools();
  const spools = useSpools();
  const chosen = useChosenSpool();
  if (!several) return null;
  return (
    <div className="spool-switcher">
      <label htmlFor="spool-switcher">Spool</label>
      <select id="spool-switcher" value={chosen ?? ''} onChange={(e) => chooseSpool(e.target.value || null)}>
        <option value="">All spools</option>
        {spools.map((s) => (
          <option key={s.name} value={s.name}>
            {s.name}
            {s.problem ? ' — needs attention' : ''}
          </option>
        ))}
      </select>
    </div>
  );
}

/** A request's, key's or entry's spool, named when the home has several. */
export function SpoolBadge({ spool }: { spool: string | null }) {
  const several = useSeveralSpools();
  if (!several || !spool) return null;
  return (
    <span className="badge badge-neutral spool-badge" title={`spool ${spool}`}>
      {spool}
    </span>
  );
}
