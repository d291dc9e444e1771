// Trying the selected operation with sample arguments: the exact argv, folder and environment a request
// with them would get (as you type, from the unsaved text), and a dry run that really runs it once,
// after the person confirms the exact command and folder, and only when the allowlist has no problems.
// The same for its reconcile check, whose result also says what its answer would mean.
// Mounted once per operation (keyed by the store's operation serial): nothing carries over to another.
import { useEffect, useId, useRef, useState } from 'react';
import { DRY_RUN_REQUEST_ID } from '../../../shared/ipc/dryRun';
import type { DryRunView, PreviewView, ReconcileDryRunView } from '../../../shared/ipc/views';
import { OP_NAME } from '../../../shared/protocol/ids';
import { api, errorText } from '../../api';
import { Argv } from '../../components/Argv';
import { formatDuration } from '../../lib/format';
import { VERDICTS } from '../../lib/reconcile';
import { toast } from '../../stores/toasts';
import { useCheck } from './store';
import type { ArgForm, OpForm } from './form';

type Sample = Record<string, string | boolean>;

/** A sample value as the request would carry it (empty text: left out, so the default applies). */
function sampleArgs(args: ArgForm[], sample: Sample): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const a of args) {
    const v = sample[a.name];
    if (v === undefined) continue;
    if (a.type === 'boolean') {
      out[a.name] = v === true;
      continue;
    }
    const s = String(v);
    if (s === '') continue;
    if (a.type === 'integer') out[a.name] = /^-?\d+$/.test(s.trim()) ? Number(s.trim()) : s;
    else if (a.type === 'array') {
      const items = s.split('\n').filter((x) => x !== '');
      out[a.name] = a.items.type === 'integer' ? items.map((x) => (/^-?\d+$/.test(x.trim()) ? Number(x.trim()) : x)) : a.items.type === 'boolean' ? items.map((x) => x.trim() === 'true') : items;
    } else out[a.name] = s;
  }
  return out;
}

/**
 * One kind of dry run: its last result (for the inputs `key` it ran with: when they change, it goes),
 * whether it runs now, and its button (the keyboard goes on from it once it is on again).
 */
function useDryRun<V extends DryRunView>(key: string, call: () => Promise<V>) {
  const [run, setRun] = useState<{ key: string; view: V } | null>(null);
  const [running, setRunning] = useState(false);
  const busy = useRef(false);
  const refocus = useRef(false);
  const button = useRef<HTMLButtonElement>(null);
  if (run && run.key !== key) setRun(null);
  const start = async () => {
    if (busy.current) return;
    busy.current = true;
    const started = key;
    setRunning(true);
    setRun(null);
    try {
      // Main asks the person first, in a native dialog showing the exact command (a page cannot answer it).
      const view = await call();
      if (!view.ok && view.cancelled) return;
      setRun({ key: started, view });
    } catch (e) {
      toast(errorText(e), 'error');
    } finally {
      busy.current = false;
      refocus.current = true;
      setRunning(false);
    }
  };
  // The button was off while it ran: once it is on again, the keyboard goes on from it, not from the top.
  useEffect(() => {
    if (running || !refocus.current) return;
    refocus.current = false;
    if (button.current && !button.current.disabled && document.activeElement === document.body) button.current.focus();
  }, [running]);
  return { result: run?.view ?? null, running, start, button };
}

export function TryOut({ text, form }: { text: string; form: OpForm }) {
  const check = useCheck();
  const [sample, setSample] = useState<Sample>({});
  const [preview, setPreview] = useState<{ key: string; view: PreviewView } | null>(null);
  const args = sampleArgs(form.args, sample);
  const nameOk = OP_NAME.test(form.name);
  const key = JSON.stringify([text, form.name, args]);
  const inputs = { text, op: form.name, args };
  const dry = useDryRun<DryRunView>(key, () => api.allowlist.dryRun(inputs));
  const recDry = useDryRun<ReconcileDryRunView>(key, () => api.allowlist.dryRunReconcile(inputs));
  useEffect(() => {
    if (!nameOk) return;
    let live = true;
    const [t, op, a] = JSON.parse(key) as [string, string, Record<string, unknown>];
    const timer = setTimeout(() => {
      api.allowlist.preview({ text: t, op, args: a }).then(
        (view) => live && setPreview({ key, view }),
        (e: unknown) => live && setPreview({ key, view: { ok: false, message: errorText(e) } }),
      );
    }, 250);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [key, nameOk]);

  const current = preview?.key === key ? preview.view : null;
  const plan = (current ?? preview?.view)?.ok ? (current ?? preview!.view) : null;
  // Why the dry run is off, if it is.
  const blocked = !nameOk
    ? 'Give the operation a valid name first.'
    : check === null
      ? 'Checking the allowlist…'
      : !check.ok
        ? 'Fix the problems listed at the top first: only an allowlist without problems can be dry-run.'
        : current === null
          ? 'Working out the command…'
          : !current.ok
            ? 'These sample arguments are refused (see above).'
            : null;


  return (
    <section className="card try-out" aria-labelledby="try-title">
      <h2 id="try-title">Try it</h2>
      <p className="muted section-hint">Sample arguments, as a request from the agent would give them. Leave a box empty to leave the argument out.</p>
      {form.args.length > 0 ? (
        <div className="field-grid">
          {form.args.map((a, i) => (
            // By place: while a name is being typed two arguments can share it for a moment.
            <SampleInput key={i} arg={a} value={sample[a.name]} onChange={(v) => setSample((s) => ({ ...s, [a.name]: v }))} />
          ))}
        </div>
      ) : null}
      <div className="try-preview" aria-live="polite">
        <h3>Would run</h3>
        {!nameOk ? (
          <p className="muted">Give the operation a valid name to see what it would run.</p>
        ) : current && !current.ok ? (
          <p className="error-text" role="status">
            {current.message}
          </p>
        ) : plan && plan.ok ? (
          <div className={current ? undefined : 'stale'}>
            <Argv argv={plan.plan.argv} cwd={plan.plan.cwd} />
            <dl className="facts try-facts">
              {Object.keys(plan.plan.env).length > 0 ? (
                <>
                  <dt>Environment</dt>
                  <dd>
                    {Object.entries(plan.plan.env).map(([k, v]) => (
                      <code key={k} className="env-pair">
                        {k}={v}
                      </code>
                    ))}
                  </dd>
                </>
              ) : null}
              <dt>Approval</dt>
              <dd>{plan.plan.approval === 'never' ? 'Runs without asking' : 'Asks you each time'}</dd>
              <dt>Limits</dt>
              <dd>
                {plan.plan.timeout_s} s, {plan.plan.max_output_bytes.toLocaleString()} bytes of output
              </dd>
            </dl>
          </div>
        ) : (
          <p className="muted">Working it out…</p>
        )}
      </div>
      <div className="dry-run-bar">
        <button
          ref={dry.button}
          type="button"
          onClick={() => void dry.start()}
          disabled={dry.running || blocked !== null}
          aria-busy={dry.running ? true : undefined}
          aria-describedby={blocked ? 'dry-run-warning dry-run-blocked' : 'dry-run-warning'}
        >
          {dry.running ? 'Running…' : 'Dry run…'}
        </button>
        <div className="dry-run-notes">
          <span id="dry-run-warning" className="warn-text">
            ⚠ A dry run really runs this command now, on this computer, with these arguments — without asking for approval. You confirm the exact command first.
          </span>
          {blocked ? (
            <span id="dry-run-blocked" className="muted">
              {blocked}
            </span>
          ) : null}
        </div>
      </div>
      {dry.result ? <DryRunResult run={dry.result} label="Dry run" /> : null}
      {form.reconcile ? (
        <div className="try-reconcile">
          <h3>Reconcile check</h3>
          <div className="dry-run-bar">
            <button
              ref={recDry.button}
              type="button"
              onClick={() => void recDry.start()}
              disabled={recDry.running || blocked !== null}
              aria-busy={recDry.running ? true : undefined}
              aria-describedby={blocked ? 'reconcile-try-warning dry-run-blocked' : 'reconcile-try-warning'}
            >
              {recDry.running ? 'Checking…' : 'Try the reconcile check…'}
            </button>
            <div className="dry-run-notes">
              <span id="reconcile-try-warning" className="warn-text">
                ⚠ This really runs the reconcile command now, with these arguments and the stand-in request id <code>{DRY_RUN_REQUEST_ID}</code>. You confirm the exact
                command first.
              </span>
            </div>
          </div>
          {recDry.result ? <DryRunResult run={recDry.result} label="Reconcile check" /> : null}
        </div>
      ) : null}
    </section>
  );
}

function SampleInput({ arg, value, onChange }: { arg: ArgForm; value: string | boolean | undefined; onChange: (v: string | boolean) => void }) {
  const id = useId();
  const label = `Sample ${arg.name}`;
  if (arg.type === 'boolean') {
    return (
      <label className="check">
        <input type="checkbox" checked={value === true} onChange={(e) => onChange(e.target.checked)} /> {label}
      </label>
    );
  }
  const hint = arg.type === 'array' ? `list of ${arg.items.type || 'values'}, one per line` : arg.type;
  const text = typeof value === 'string' ? value : '';
  return (
    <div className="field">
      <label htmlFor={id}>
        {label} <span className="muted label-note">({hint})</span>
      </label>
      {arg.type === 'array' ? (
        <textarea id={id} rows={2} value={text} onChange={(e) => onChange(e.target.value)} spellCheck={false} />
      ) : (
        <input
          id={id}
          value={text}
          onChange={(e) => onChange(e.target.value)}
          inputMode={arg.type === 'integer' ? 'numeric' : undefined}
          placeholder={arg.hasDefault ? `default: ${arg.default}` : ''}
          spellCheck={false}
          autoComplete="off"
        />
      )}
    </div>
  );
}

/** `label` names the result and its outputs; a reconcile check's also says what its answer would mean. */
function DryRunResult({ run, label }: { run: DryRunView | ReconcileDryRunView; label: string }) {
  if (!run.ok) {
    return (
      <div className="callout callout-bad" role="alert">
        Did not run: {run.message}
      </div>
    );
  }
  const good = run.exit_code === 0 && !run.error;
  const verdict = 'verdict' in run ? VERDICTS[run.verdict] : null;
  return (
    <div className="dry-run-result" role="region" aria-label={`${label} result`}>
      <div className="row">
        {verdict ? <span className={`badge badge-${verdict.tone}`}>Verdict: {verdict.label.toLowerCase()}</span> : null}
        <span className={`badge badge-${good ? 'good' : 'bad'}`}>{run.exit_code !== null ? `Exit code ${run.exit_code}` : run.signal ? `Killed by ${run.signal}` : 'No exit code'}</span>
        <span className="muted">took {formatDuration(run.duration_ms)}</span>
      </div>
      {verdict ? <Argv argv={run.plan.argv} cwd={run.plan.cwd} /> : null}
      {run.error ? (
        <div className="callout callout-bad">
          <strong>{run.error.code}</strong>: {run.error.message}
        </div>
      ) : null}
      {!run.stdout && !run.stderr ? <p className="muted">No output.</p> : null}
      {run.stdout ? (
        <pre className="output" aria-label={`${label} standard output`}>
          {run.stdout}
        </pre>
      ) : null}
      {run.stderr ? (
        <pre className="output output-err" aria-label={`${label} standard error`}>
          {run.stderr}
        </pre>
      ) : null}
    </div>
  );
}
