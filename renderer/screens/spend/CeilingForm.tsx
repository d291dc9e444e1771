// Adding or editing one spend ceiling: who it counts (all keys, each key, one key), over what window,
// its limits (runs, cost units, run time: at least one) and what happens at the limit.
import { useId, useState } from 'react';
import type { CeilingView, KeyView } from '../../../shared/ipc/views';
import { Field } from '../../components/Field';
import { splitDuration, UNITS, type Unit } from './duration';

const NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const WINDOW_UNITS: Unit[] = ['minutes', 'hours', 'days'];
const RUN_TIME_UNITS: Unit[] = ['seconds', 'minutes', 'hours'];
const MAX_WINDOW_S = 366 * 86400;

interface Draft {
  name: string;
  per: 'global' | 'key';
  keyId: string;
  windowAmount: string;
  windowUnit: Unit;
  maxRuns: string;
  maxCost: string;
  runTimeAmount: string;
  runTimeUnit: Unit;
  action: 'reject' | 'ask';
}

function draftOf(c: CeilingView | null): Draft {
  const w = splitDuration(c?.window_s ?? 3600, WINDOW_UNITS);
  const rt = c?.max_run_time_s !== undefined ? splitDuration(c.max_run_time_s, RUN_TIME_UNITS) : { amount: '', unit: 'minutes' as Unit };
  return {
    name: c?.name ?? '',
    per: c?.per ?? 'global',
    keyId: c?.key_id ?? '',
    windowAmount: w.amount,
    windowUnit: w.unit,
    maxRuns: c?.max_runs !== undefined ? String(c.max_runs) : '',
    maxCost: c?.max_cost !== undefined ? String(c.max_cost) : '',
    runTimeAmount: rt.amount,
    runTimeUnit: rt.unit,
    action: c?.action ?? 'reject',
  };
}

/** A whole number ≥ 0 from a field, undefined when empty, NaN when not one. */
function count(text: string): number | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  return /^\d+$/.test(t) ? Number(t) : NaN;
}

interface Checked {
  ceiling: CeilingView | null;
  errors: Partial<Record<'name' | 'window' | 'maxRuns' | 'maxCost' | 'runTime' | 'limits', string>>;
}

function check(d: Draft, otherNames: string[], retentionDays: number): Checked {
  const errors: Checked['errors'] = {};
  const name = d.name.trim();
  if (!NAME.test(name)) errors.name = name === '' ? 'Give the ceiling a name.' : 'Letters, digits, _ . - only (at most 64).';
  else if (otherNames.includes(name)) errors.name = `There is already a ceiling named “${name}”.`;

  const amount = Number(d.windowAmount);
  const window_s = Math.round(amount * UNITS[d.windowUnit]);
  if (d.windowAmount.trim() === '' || !Number.isFinite(amount) || amount <= 0) errors.window = 'Enter how long the window is.';
  else if (window_s < 60) errors.window = 'The window is at least 1 minute.';
  else if (window_s > MAX_WINDOW_S) errors.window = 'The window is at most 366 days.';
  else if (window_s > retentionDays * 86400)
    errors.window = `The ledger keeps runs for ${retentionDays} days (Settings → retention): the window cannot be longer.`;

  const max_runs = count(d.maxRuns);
  if (Number.isNaN(max_runs)) errors.maxRuns = 'A whole number of runs, or empty for no limit.';
  const max_cost = count(d.maxCost);
  if (Number.isNaN(max_cost)) errors.maxCost = 'A whole number of cost units, or empty for no limit.';
  let max_run_time_s: number | undefined;
  if (d.runTimeAmount.trim() !== '') {
    const rt = Number(d.runTimeAmount);
    if (!Number.isFinite(rt) || rt < 0) errors.runTime = 'A length of time, or empty for no limit.';
    else max_run_time_s = Math.round(rt * UNITS[d.runTimeUnit]);
  }
  if (max_runs === undefined && max_cost === undefined && max_run_time_s === undefined && !errors.runTime) {
    errors.limits = 'Set at least one limit: runs, cost or run time.';
  }
  if (Object.keys(errors).length > 0) return { ceiling: null, errors };
  return {
    errors,
    ceiling: {
      name,
      per: d.per,
      ...(d.per === 'key' && d.keyId ? { key_id: d.keyId } : {}),
      window_s,
      ...(max_runs !== undefined ? { max_runs } : {}),
      ...(max_cost !== undefined ? { max_cost } : {}),
      ...(max_run_time_s !== undefined ? { max_run_time_s } : {}),
      action: d.action,
    },
  };
}

export function CeilingForm({
  initial,
  otherNames,
  keys,
  retentionDays,
  onSave,
  onCancel,
}: {
  initial: CeilingView | null;
  otherNames: string[];
  keys: KeyView[];
  retentionDays: number;
  /** Resolves to the host's error, or null once saved. */
  onSave: (c: CeilingView) => Promise<string | null>;
  onCancel: () => void;
}) {
  const [d, setD] = useState<Draft>(() => draftOf(initial));
  const [touched, setTouched] = useState(false);
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const id = useId();
  const set = <K extends keyof Draft>(k: K, v: Draft[K]) => setD((x) => ({ ...x, [k]: v }));
  const { ceiling, errors } = check(d, otherNames, retentionDays);
  // Errors show once the user has tried to save, or as they type into a field that is wrong.
  const show = (k: keyof Checked['errors'], typed: boolean) => (touched || typed ? (errors[k] ?? null) : null);
  const active = keys.filter((k) => !k.revoked_at || k.key_id === d.keyId);

  const submit = async () => {
    setTouched(true);
    if (!ceiling) return;
    setBusy(true);
    setFailure(await onSave(ceiling));
    setBusy(false);
  };

  return (
    <form
      className="card ceiling-form"
      aria-labelledby={`${id}-title`}
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
      onKeyDown={(e) => {
        if (e.key === 'Escape') onCancel();
      }}
    >
      <h2 id={`${id}-title`}>{initial ? `Edit ceiling “${initial.name}”` : 'New ceiling'}</h2>
      <Field label="Name" hint="Letters, digits, _ . - (e.g. daily-runs)." error={show('name', d.name !== '')}>
        <input value={d.name} onChange={(e) => set('name', e.target.value)} maxLength={64} autoComplete="off" autoFocus className="ceiling-name" />
      </Field>

      <fieldset className="ceiling-fieldset">
        <legend>Counts</legend>
        <label className="ceiling-choice">
          <input type="radio" name={`${id}-per`} checked={d.per === 'global'} onChange={() => set('per', 'global')} />
          <span>All keys together</span>
        </label>
        <label className="ceiling-choice">
          <input type="radio" name={`${id}-per`} checked={d.per === 'key'} onChange={() => set('per', 'key')} />
          <span>Each key on its own</span>
        </label>
        {d.per === 'key' ? (
          <div className="ceiling-indent">
            <Field label="Which keys" hint="A limit for every key, or for one key only.">
              <select value={d.keyId} onChange={(e) => set('keyId', e.target.value)}>
                <option value="">Every key</option>
                {active.map((k) => (
                  <option key={k.key_id} value={k.key_id}>
                    Only {k.name} ({k.key_id})
                  </option>
                ))}
              </select>
            </Field>
          </div>
        ) : null}
      </fieldset>

      <div className="field">
        <label htmlFor={`${id}-window`}>Window</label>
        <div className="row">
          <span className="muted">the last</span>
          <input
            id={`${id}-window`}
            type="number"
            min={1}
            step="any"
            inputMode="decimal"
            className="ceiling-number"
            value={d.windowAmount}
            onChange={(e) => set('windowAmount', e.target.value)}
            aria-invalid={show('window', true) ? true : undefined}
            aria-describedby={`${id}-window-note`}
          />
          <select aria-label="Window unit" value={d.windowUnit} onChange={(e) => set('windowUnit', e.target.value as Unit)}>
            {WINDOW_UNITS.map((u) => (
              <option key={u} value={u}>
                {u}
              </option>
            ))}
          </select>
        </div>
        <div id={`${id}-window-note`} className={`field-message ${errors.window ? 'error-text' : 'muted'}`}>
          {errors.window ?? 'Spend is counted over this rolling window (at least 1 minute).'}
        </div>
      </div>

      <fieldset className="ceiling-fieldset" aria-describedby={show('limits', false) ? `${id}-limits` : undefined}>
        <legend>Limits (at least one; leave empty for no limit)</legend>
        <div className="ceiling-limits">
          <Field label="Max runs" error={show('maxRuns', true)}>
            <input type="number" min={0} step={1} className="ceiling-number" value={d.maxRuns} onChange={(e) => set('maxRuns', e.target.value)} />
          </Field>
          <Field label="Max cost units" hint="Each operation's cost: in the allowlist." error={show('maxCost', true)}>
            <input type="number" min={0} step={1} className="ceiling-number" value={d.maxCost} onChange={(e) => set('maxCost', e.target.value)} />
          </Field>
          <div className="field">
            <label htmlFor={`${id}-runtime`}>Max run time</label>
            <div className="row">
              <input
                id={`${id}-runtime`}
                type="number"
                min={0}
                step="any"
                className="ceiling-number"
                value={d.runTimeAmount}
                onChange={(e) => set('runTimeAmount', e.target.value)}
                aria-invalid={errors.runTime ? true : undefined}
                aria-describedby={errors.runTime ? `${id}-runtime-note` : undefined}
              />
              <select aria-label="Run time unit" value={d.runTimeUnit} onChange={(e) => set('runTimeUnit', e.target.value as Unit)}>
                {RUN_TIME_UNITS.map((u) => (
                  <option key={u} value={u}>
                    {u}
                  </option>
                ))}
              </select>
            </div>
            {errors.runTime ? (
              <div id={`${id}-runtime-note`} className="field-message error-text">
                {errors.runTime}
              </div>
            ) : null}
          </div>
        </div>
        {show('limits', false) ? (
          <div id={`${id}-limits`} className="field-message error-text">
            {errors.limits}
          </div>
        ) : null}
      </fieldset>

      <fieldset className="ceiling-fieldset">
        <legend>At the limit</legend>
        <label className="ceiling-choice">
          <input type="radio" name={`${id}-action`} checked={d.action === 'reject'} onChange={() => set('action', 'reject')} />
          <span>
            <strong>Reject</strong> <span className="muted">— further requests fail with spend_ceiling until the window frees up</span>
          </span>
        </label>
        <label className="ceiling-choice">
          <input type="radio" name={`${id}-action`} checked={d.action === 'ask'} onChange={() => set('action', 'ask')} />
          <span>
            <strong>Ask me</strong> <span className="muted">— further requests wait for your approval</span>
          </span>
        </label>
      </fieldset>

      {failure ? (
        <div className="callout callout-bad" role="alert">
          The host refused this ceiling: {failure}
        </div>
      ) : null}
      <div className="row">
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Saving…' : initial ? 'Save ceiling' : 'Add ceiling'}
        </button>
        <button type="button" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
      </div>
    </form>
  );
}
