// The form for a new key: its name, the spool it is for (when the home has several), what it may do
// (read or write), and which operations it may call.
import { useId, useState } from 'react';
import { api, errorText } from '../../api';
import { Field } from '../../components/Field';
import { useLoad } from '../../lib/useLoad';
import { useStatus } from '../../stores/status';
import type { NewKey } from './NewKeyPanel';
import { useFocusOnMount } from '../../lib/useFocusOnMount';
import { useChosenSpool, useSeveralSpools, useSpools } from '../../stores/spool';
import { DEFAULT_SPOOL } from '../../../shared/protocol/ids';

const EMPTY: string[] = [];

export function CreateKeyForm({ onCreated, onCancel }: { onCreated: (k: NewKey) => void; onCancel: () => void }) {
  const allowlistOps = useStatus((s) => s.allowlist.operations) ?? EMPTY;
  const spools = useSpools();
  const several = useSeveralSpools();
  const chosenSpool = useChosenSpool();
  // The switcher's spool, else `default`, else the first: the one the key is most likely for.
  const [spool, setSpool] = useState(() => chosenSpool ?? (spools.some((s) => s.name === DEFAULT_SPOOL) ? DEFAULT_SPOOL : (spools[0]?.name ?? DEFAULT_SPOOL)));
  const catalog = useLoad(() => api.catalog.get(), []);
  const described = new Map((catalog.data?.operations ?? []).map((o) => [o.name, o]));
  // The allowlist's operations that the key's spool sees; the catalog's (what the sandbox sees) when the
  // allowlist cannot be read.
  const seen = several ? (spools.find((s) => s.name === spool)?.operations ?? allowlistOps) : allowlistOps;
  const ops = allowlistOps.length > 0 ? seen : [...described.keys()];
  const [name, setName] = useState('');
  const [scope, setScope] = useState<'read' | 'write'>('read');
  const [limit, setLimit] = useState(false);
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [touched, setTouched] = useState(false);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const nameRef = useFocusOnMount<HTMLInputElement>();
  const groupId = useId();

  const nameError = name.trim() === '' ? 'Give the key a name, e.g. the sandbox it is for.' : name.trim().length > 100 ? 'At most 100 characters.' : null;
  const opsError = limit && chosen.size === 0 ? 'Choose at least one operation, or allow all of them.' : null;

  const toggle = (op: string) =>
    setChosen((c) => {
      const next = new Set(c);
      if (next.has(op)) next.delete(op);
      else next.add(op);
      return next;
    });

  const submit = async () => {
    setTouched(true);
    if (nameError || opsError) return;
    setBusy(true);
    setFailure(null);
    try {
      const r = await api.keys.create({ name: name.trim(), scope, ops: limit ? ops.filter((o) => chosen.has(o)) : null, ...(several ? { spool } : {}) });
      // null: the person said no in the native dialog the app asks in; the form stays as it was.
      if (r) onCreated(r);
      else setFailure('Not created: you cancelled in the confirmation dialog.');
    } catch (e) {
      setFailure(errorText(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      className="card key-form"
      aria-labelledby={`${groupId}-title`}
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
      onKeyDown={(e) => {
        if (e.key === 'Escape') onCancel();
      }}
    >
      <h2 id={`${groupId}-title`}>New key</h2>
      <Field label="Name" hint="Who uses it: the sandbox or agent it is for." error={touched || name ? nameError : null}>
        <input ref={nameRef} value={name} onChange={(e) => setName(e.target.value)} maxLength={100} placeholder="e.g. claude-devcontainer" autoComplete="off" />
      </Field>
      {several ? (
        <Field label="Spool" hint="The sandbox it is for: its requests are accepted through this spool's folder only.">
          <select value={spool} onChange={(e) => setSpool(e.target.value)}>
            {spools.map((s) => (
              <option key={s.name} value={s.name}>
                {s.name} ({s.dir})
              </option>
            ))}
          </select>
        </Field>
      ) : null}

      <fieldset className="key-fieldset">
        <legend>Scope</legend>
        <label className="key-choice">
          <input type="radio" name="scope" value="read" checked={scope === 'read'} onChange={() => setScope('read')} />
          <span>
            <strong>Read only</strong> <span className="muted">— may call only operations marked scope: read</span>
          </span>
        </label>
        <label className="key-choice">
          <input type="radio" name="scope" value="write" checked={scope === 'write'} onChange={() => setScope('write')} />
          <span>
            <strong>Read &amp; write</strong> <span className="muted">— may also call operations that change things</span>
          </span>
        </label>
      </fieldset>

      <fieldset className="key-fieldset" aria-describedby={opsError ? `${groupId}-ops-error` : undefined}>
        <legend>Operations</legend>
        <label className="key-choice">
          <input type="radio" name="ops" checked={!limit} onChange={() => setLimit(false)} />
          <span>
            <strong>All operations</strong> <span className="muted">— every operation in the allowlist, now and later</span>
          </span>
        </label>
        <label className="key-choice">
          <input type="radio" name="ops" checked={limit} onChange={() => setLimit(true)} />
          <span>
            <strong>Only these</strong>
          </span>
        </label>
        {limit ? (
          ops.length === 0 ? (
            <p className="muted key-ops-choice">The allowlist has no operations yet.</p>
          ) : (
            <div className="key-ops-choice">
              {ops.map((op) => (
                <label key={op} className="key-choice">
                  <input type="checkbox" checked={chosen.has(op)} onChange={() => toggle(op)} />
                  <span>
                    <code>{op}</code>
                    {described.get(op)?.description ? <span className="muted"> — {described.get(op)?.description}</span> : null}
                  </span>
                </label>
              ))}
            </div>
          )
        ) : null}
        {opsError && touched ? (
          <div id={`${groupId}-ops-error`} className="field-message error-text">
            {opsError}
          </div>
        ) : null}
      </fieldset>

      {failure ? (
        <div className="callout callout-bad" role="alert">
          Could not create the key: {failure}
        </div>
      ) : null}
      <div className="row">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Creating…' : 'Create key'}
        </button>
        <button type="button" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
      </div>
    </form>
  );
}
