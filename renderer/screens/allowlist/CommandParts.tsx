// An argv template as one box per element, the program first: each can be edited, moved and removed.
// The operation's command and its reconcile command both use it.
export function CommandParts({
  kind,
  parts,
  errorOf,
  onChange,
}: {
  /** Which command: its boxes are named for it ("Command part 2", "Reconcile part 2"). */
  kind: 'command' | 'reconcile';
  parts: string[];
  errorOf: (i: number) => string | null;
  onChange: (parts: string[]) => void;
}) {
  const label = kind === 'command' ? 'Command part' : 'Reconcile part';
  const short = kind === 'command' ? 'part' : 'reconcile part';
  const setPart = (i: number, v: string) => onChange(parts.map((c, j) => (j === i ? v : c)));
  const movePart = (i: number, d: -1 | 1) => {
    const c = [...parts];
    [c[i], c[i + d]] = [c[i + d]!, c[i]!];
    onChange(c);
  };
  return (
    <ol className="command-parts">
      {parts.map((part, i) => {
        const err = errorOf(i);
        const errId = `${kind}-part-err-${i}`;
        return (
          <li key={i} className={err ? 'field-error' : undefined}>
            <div className="part-row">
              <input
                aria-label={i === 0 ? `${label} 1 (program)` : `${label} ${i + 1}`}
                value={part}
                onChange={(e) => setPart(i, e.target.value)}
                aria-invalid={err ? true : undefined}
                aria-describedby={err ? errId : undefined}
                spellCheck={false}
                autoComplete="off"
                className="mono"
                placeholder={i === 0 ? '/usr/bin/program' : '{argument} or literal text'}
              />
              <button type="button" className="icon-button" aria-label={`Move ${short} ${i + 1} up`} disabled={i === 0} onClick={() => movePart(i, -1)}>
                ↑
              </button>
              <button type="button" className="icon-button" aria-label={`Move ${short} ${i + 1} down`} disabled={i === parts.length - 1} onClick={() => movePart(i, 1)}>
                ↓
              </button>
              <button type="button" className="icon-button" aria-label={`Remove ${short} ${i + 1}`} onClick={() => onChange(parts.filter((_, j) => j !== i))}>
                ×
              </button>
            </div>
            {err ? (
              <div id={errId} className="field-message error-text">
                {err}
              </div>
            ) : null}
          </li>
        );
      })}
    </ol>
  );
}
