// A labelled form control with its hint or its error underneath (tied to the control for screen readers).
import { useId, type ReactElement } from 'react';
import { cloneElement } from 'react';

export function Field({ label, hint, error, children }: { label: string; hint?: string; error?: string | null; children: ReactElement<Record<string, unknown>> }) {
  const id = useId();
  const note = error ?? hint;
  const control = cloneElement(children, {
    id,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': note ? `${id}-note` : undefined,
  });
  return (
    <div className={`field${error ? ' field-error' : ''}`}>
      <label htmlFor={id}>{label}</label>
      {control}
      {note ? (
        <div id={`${id}-note`} className={error ? 'field-message error-text' : 'field-message muted'}>
          {note}
        </div>
      ) : null}
    </div>
  );
}
