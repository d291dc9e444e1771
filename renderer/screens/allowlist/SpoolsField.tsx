// Which spools see an operation: a tick box per spool of the home (none ticked: every spool). A name the
// file lists that is not one of the home's spools stays ticked, marked, and is a problem to fix: it
// would hide the operation from every agent.
import { useId, useMemo } from 'react';
import { useStatus } from '../../stores/status';

export function SpoolsField({ chosen, error, onChange }: { chosen: string[]; error: string | null; onChange: (spools: string[]) => void }) {
  const id = useId();
  const spools = useStatus((s) => s.spools);
  const home = useMemo(() => spools?.map((s) => s.name) ?? [], [spools]);
  const unknown = home.length > 0 ? chosen.filter((n) => !home.includes(n)) : [];
  const names = [...home, ...chosen.filter((n) => !home.includes(n))];
  const problem = error ?? (unknown.length > 0 ? `${unknown.map((n) => `"${n}"`).join(', ')} ${unknown.length === 1 ? 'is not a spool' : 'are not spools'} of this home (its spools: ${home.join(', ')})` : null);
  const toggle = (n: string, on: boolean) => onChange(on ? [...chosen, n] : chosen.filter((x) => x !== n));
  return (
    <fieldset className={`spools-field${problem ? ' field-error' : ''}`} aria-describedby={`${id}-note`}>
      <legend>Spools</legend>
      {names.length > 0 ? (
        <div className="spool-options">
          {names.map((n) => (
            <label key={n} className="check">
              <input type="checkbox" checked={chosen.includes(n)} onChange={(e) => toggle(n, e.target.checked)} aria-invalid={unknown.includes(n) ? true : undefined} /> <code>{n}</code>
              {unknown.includes(n) ? <span className="error-text">(not a spool of this home)</span> : null}
            </label>
          ))}
        </div>
      ) : null}
      <div id={`${id}-note`} className={problem ? 'field-message error-text' : 'field-message muted'}>
        {problem ?? (chosen.length === 0 ? 'All spools: the agents of every spool see it. Tick spools to offer it to theirs only.' : `Only the agents of ${chosen.join(', ')} see it; other spools' catalogs leave it out.`)}
      </div>
      {chosen.length > 0 ? (
        <button type="button" onClick={() => onChange([])}>
          Offer to all spools
        </button>
      ) : null}
    </fieldset>
  );
}
