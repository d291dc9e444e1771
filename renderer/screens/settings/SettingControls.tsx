// One setting each: a number (typed, checked as it is typed, saved with Enter or its Save button) or a
// switch (saved when toggled). The host's refusal shows next to the field, like the form's own checks.
import { useId, useState } from 'react';

export function NumberSetting({
  label,
  hint,
  unit,
  value,
  step = 'any',
  check,
  save,
}: {
  label: string;
  hint: string;
  unit: string;
  /** The saved value, in the field's unit. */
  value: number;
  step?: number | 'any';
  /** Why a value cannot be saved, or null. */
  check: (n: number) => string | null;
  /** Resolves to the host's error, or null once saved. */
  save: (n: number) => Promise<string | null>;
}) {
  const id = useId();
  // What the user is typing; null shows the saved value (and follows it when it changes elsewhere).
  const [draft, setDraft] = useState<string | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const text = draft ?? String(value);
  const n = Number(text);
  const dirty = text.trim() !== String(value);
  const invalid = text.trim() === '' || !Number.isFinite(n) ? 'Enter a number.' : check(n);
  const error = dirty ? (invalid ?? failure) : failure;

  const undo = () => {
    setDraft(null);
    setFailure(null);
  };

  const submit = async () => {
    if (!dirty || invalid || busy) return;
    setBusy(true);
    const refused = await save(n);
    setFailure(refused);
    // Saved: the field shows what the host stored (it may have rounded what was typed).
    if (!refused) setDraft(null);
    setBusy(false);
  };

  return (
    <form
      className={`field setting${error ? ' field-error' : ''}`}
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <label htmlFor={id}>{label}</label>
      <div className="row setting-control">
        <input
          id={id}
          type="number"
          step={step}
          inputMode="decimal"
          value={text}
          onChange={(e) => {
            setDraft(e.target.value);
            setFailure(null);
          }}
          onKeyDown={(e) => {
            if (e.key === 'Escape' && (dirty || failure)) {
              e.stopPropagation();
              undo();
            }
          }}
          aria-invalid={error ? true : undefined}
          aria-describedby={`${id}-note`}
        />
        <span className="muted">{unit}</span>
        <button type="submit" disabled={!dirty || !!invalid || busy} aria-label={`Save ${label.toLowerCase()}`}>
          {busy ? 'Saving…' : 'Save'}
        </button>
        {dirty && !busy ? (
          <button type="button" className="link" onClick={undo}>
            Undo
          </button>
        ) : null}
      </div>
      <div id={`${id}-note`} className={error ? 'field-message error-text' : 'field-message muted'} role={error ? 'alert' : undefined}>
        {error ?? hint}
      </div>
    </form>
  );
}

export function SwitchSetting({ label, hint, value, save }: { label: string; hint: string; value: boolean; save: (v: boolean) => Promise<string | null> }) {
  const id = useId();
  // What the box shows while its save runs (the saved value follows once the host has it).
  const [pending, setPending] = useState<boolean | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  return (
    <div className="field setting">
      <label className="setting-switch">
        <input
          type="checkbox"
          checked={pending ?? value}
          aria-busy={pending !== null}
          aria-describedby={`${id}-note`}
          onChange={async (e) => {
            if (pending !== null) return;
            const next = e.target.checked;
            setPending(next);
            setFailure(await save(next));
            setPending(null);
          }}
        />
        <span>{label}</span>
      </label>
      <div id={`${id}-note`} className={failure ? 'field-message error-text' : 'field-message muted'} role={failure ? 'alert' : undefined}>
        {failure ?? hint}
      </div>
    </div>
  );
}
