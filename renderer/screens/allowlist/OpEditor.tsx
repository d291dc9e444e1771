// The form of one operation: what it is, the command (one box per argv element), where it runs,
// its arguments, its policy and limits, the spools that see it, and its reconcile check (the command
// that looks up whether an interrupted run took effect). Every change is written into the YAML at once.
// Hints, bounds and defaults come from the allowlist's schema.
import { api, errorText } from '../../api';
import { Field } from '../../components/Field';
import { toast } from '../../stores/toasts';
import { ArgEditor } from './ArgEditor';
import { CommandParts } from './CommandParts';
import { InvalidOption } from './InvalidOption';
import { SharedWarning } from './SharedWarning';
import { fieldError, itemErrors, problemsOf, type Problem } from './problems';
import { APPROVALS, OPERATION_FIELDS, RECONCILE_FIELDS, SCOPES, approvalDefault, type FieldSpec, type Scope } from '../../../shared/allowlist/schema';
import { emptyArg, type OpForm } from './form';
import { SpoolsField } from './SpoolsField';

interface Props {
  form: OpForm;
  index: number;
  problems: Problem[];
  onChange: (f: OpForm) => void;
}

const PLACEHOLDER = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

export function OpEditor({ form, index, problems: all, onChange }: Props) {
  const problems = problemsOf(all, index);
  const at = (sub: string, exact = false) => fieldError(problems, index, sub, exact);
  const set = (p: Partial<OpForm>) => onChange({ ...form, ...p });
  const placeholdersIn = (parts: string[]) => new Set(parts.flatMap((c) => [...c.replaceAll('{{', '').matchAll(PLACEHOLDER)].map((m) => m[1])));
  const used = placeholdersIn(form.command);
  const rec = form.reconcile;
  // Names, once each (two arguments can share a name for a moment while one is being typed).
  const unused = [...new Set(form.args.map((a) => a.name).filter((n) => n && !used.has(n)))];

  const chooseCwd = async () => {
    try {
      const picked = await api.dialog.pickFolder({ title: `Working folder for ${form.name || 'the operation'}`, ...(form.cwd.startsWith('/') ? { defaultPath: form.cwd } : {}) });
      if (picked) set({ cwd: picked });
    } catch (e) {
      toast(errorText(e), 'error');
    }
  };

  return (
    <div className="op-form">
      <section aria-labelledby="sec-what">
        <h3 id="sec-what">Operation</h3>
        <div className="field-grid">
          <Field label="Operation name" error={at('name')} hint="What the agent asks for: lowercase letters, digits, . _ -">
            <input value={form.name} onChange={(e) => set({ name: e.target.value })} spellCheck={false} autoComplete="off" className="mono" />
          </Field>
          <Field label="Description" error={at('description')} hint="Tells the agent what it does and when to use it.">
            <input value={form.description} onChange={(e) => set({ description: e.target.value })} />
          </Field>
        </div>
      </section>

      <section aria-labelledby="sec-command">
        <h3 id="sec-command">Command</h3>
        <p className="muted section-hint">
          The program first, then one box per argument: nothing goes through a shell. Write <code>{'{name}'}</code> for an argument&rsquo;s value,{' '}
          <code>{'{{'}</code> and <code>{'}}'}</code> for literal braces.
        </p>
        {at('command', true) ? (
          <p className="error-text field-message" role="alert">
            {at('command', true)}
          </p>
        ) : null}
        <CommandParts kind="command" parts={form.command} errorOf={(i) => at(`command[${i}]`)} onChange={(command) => set({ command })} />
        <div className="row">
          <button type="button" onClick={() => set({ command: [...form.command, ''] })}>
            Add part
          </button>
          {unused.map((name) => (
            <button key={name} type="button" onClick={() => set({ command: [...form.command, `{${name}}`] })}>
              Add <code>{`{${name}}`}</code>
            </button>
          ))}
        </div>
      </section>

      <section aria-labelledby="sec-where">
        <h3 id="sec-where">Where it runs</h3>
        <div className="cwd-row">
          <Field label="Working folder" error={at('cwd')} hint={`Absolute, or starting with ~/ (your home folder). Empty: ${OPERATION_FIELDS.cwd.defaultText}.`}>
            <input value={form.cwd} onChange={(e) => set({ cwd: e.target.value })} spellCheck={false} className="mono" />
          </Field>
          <button type="button" onClick={() => void chooseCwd()}>
            Choose folder…
          </button>
        </div>
        <label className="check">
          <input
            type="checkbox"
            checked={form.cwd_shared_with_sandbox === true}
            onChange={(e) => set({ cwd_shared_with_sandbox: e.target.checked ? true : null })}
          />{' '}
          The sandbox can write in this folder
        </label>
        {form.cwd_shared_with_sandbox === true ? <SharedWarning what="its working folder" error={at('cwd_shared_with_sandbox')} /> : null}
        <div className="env-block">
          <div className="env-title">Environment variables</div>
          {at('env', true) ? <p className="error-text field-message">{at('env', true)}</p> : null}
          {form.env.length === 0 ? <p className="muted section-hint">None besides the host&rsquo;s own. The agent can never set any.</p> : null}
          {form.env.map((e, i) => {
            const err = at(`env.${e.name}`);
            return (
              <div key={i} className="env-row-wrap">
                <div className="env-row">
                  <input
                    aria-label={`Variable ${i + 1} name`}
                    value={e.name}
                    onChange={(ev) => set({ env: form.env.map((x, j) => (j === i ? { ...x, name: ev.target.value } : x)) })}
                    className="mono"
                    spellCheck={false}
                    aria-invalid={err ? true : undefined}
                  />
                  <span aria-hidden="true">=</span>
                  <input
                    aria-label={`Variable ${i + 1} value`}
                    value={e.value}
                    onChange={(ev) => set({ env: form.env.map((x, j) => (j === i ? { ...x, value: ev.target.value } : x)) })}
                    className="mono"
                    spellCheck={false}
                  />
                  <button type="button" className="icon-button" aria-label={`Remove variable ${i + 1}`} onClick={() => set({ env: form.env.filter((_, j) => j !== i) })}>
                    ×
                  </button>
                </div>
                {err ? <div className="field-message error-text">{err}</div> : null}
              </div>
            );
          })}
          <button type="button" onClick={() => set({ env: [...form.env, { name: freshEnv(form), value: '' }] })}>
            Add variable
          </button>
        </div>
      </section>

      <section aria-labelledby="sec-args">
        <h3 id="sec-args">Arguments</h3>
        {at('args', true) ? <p className="error-text field-message">{at('args', true)}</p> : null}
        {form.args.length === 0 ? <p className="muted section-hint">No arguments: every run is exactly the command above.</p> : null}
        {form.args.map((a, i) => (
          <ArgEditor
            key={i}
            arg={a}
            position={i}
            opIndex={index}
            problems={problems}
            onChange={(na) => set({ args: form.args.map((x, j) => (j === i ? na : x)) })}
            onRemove={() => set({ args: form.args.filter((_, j) => j !== i) })}
          />
        ))}
        <button type="button" onClick={() => set({ args: [...form.args, { ...emptyArg(freshArg(form)), max_length: '' }] })}>
          Add argument
        </button>
      </section>

      <section aria-labelledby="sec-policy">
        <h3 id="sec-policy">Policy and limits</h3>
        <div className="field-grid">
          <Field label="Scope" error={at('scope')} hint={OPERATION_FIELDS.scope.about}>
            <select value={form.scope} onChange={(e) => set({ scope: e.target.value })}>
              <InvalidOption value={form.scope} known={SCOPES} />
              <option value="">Default ({OPERATION_FIELDS.scope.type.default})</option>
              {SCOPES.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Approval" error={at('approval')} hint={OPERATION_FIELDS.approval.about}>
            <select value={form.approval} onChange={(e) => set({ approval: e.target.value })}>
              <InvalidOption value={form.approval} known={APPROVALS} />
              <option value="">{approvalDefaultText(form.scope)}</option>
              <option value="always">always: ask me each time</option>
              <option value="never">never: run without asking</option>
            </select>
          </Field>
          <Field label="Timeout (seconds)" error={at('timeout_s')} hint={wholeHint(OPERATION_FIELDS.timeout_s)}>
            <input value={form.timeout_s} onChange={(e) => set({ timeout_s: e.target.value })} inputMode="numeric" placeholder={String(OPERATION_FIELDS.timeout_s.type.default)} />
          </Field>
          <Field label="Output limit (bytes)" error={at('max_output_bytes')} hint={wholeHint(OPERATION_FIELDS.max_output_bytes)}>
            <input value={form.max_output_bytes} onChange={(e) => set({ max_output_bytes: e.target.value })} inputMode="numeric" placeholder={String(OPERATION_FIELDS.max_output_bytes.type.default)} />
          </Field>
          <Field label="Concurrency" error={at('concurrency')} hint={wholeHint(OPERATION_FIELDS.concurrency)}>
            <input value={form.concurrency} onChange={(e) => set({ concurrency: e.target.value })} inputMode="numeric" placeholder={String(OPERATION_FIELDS.concurrency.type.default)} />
          </Field>
          <Field label="Cost" error={at('cost')} hint={wholeHint(OPERATION_FIELDS.cost)}>
            <input value={form.cost} onChange={(e) => set({ cost: e.target.value })} inputMode="numeric" placeholder={String(OPERATION_FIELDS.cost.type.default)} />
          </Field>
        </div>
        <SpoolsField chosen={form.spools} error={itemErrors(problems, index, 'spools')} onChange={(spools) => set({ spools })} />
      </section>

      <section aria-labelledby="sec-reconcile">
        <h3 id="sec-reconcile">Reconcile</h3>
        <p className="muted section-hint">
          If the host stops while a run of this operation goes on, it runs this command to look up whether the run took effect: exit 0 means it did
          (the run succeeded), exit 1 that it did not (the agent may retry), anything else leaves it to you. Write the operation&rsquo;s arguments as{' '}
          <code>{'{name}'}</code>, and <code>{'{request_id}'}</code> for the request&rsquo;s id. It should only look, never change anything.
        </p>
        {at('reconcile', true) ? (
          <p className="error-text field-message" role="alert">
            {at('reconcile', true)}
          </p>
        ) : null}
        {rec === null ? (
          <button type="button" onClick={() => set({ reconcile: { command: [''], timeout_s: '' } })}>
            Add a reconcile check
          </button>
        ) : (
          <>
            {at('reconcile.command', true) ? (
              <p className="error-text field-message" role="alert">
                {at('reconcile.command', true)}
              </p>
            ) : null}
            <CommandParts kind="reconcile" parts={rec.command} errorOf={(i) => at(`reconcile.command[${i}]`)} onChange={(command) => set({ reconcile: { ...rec, command } })} />
            <div className="row">
              <button type="button" onClick={() => set({ reconcile: { ...rec, command: [...rec.command, ''] } })}>
                Add reconcile part
              </button>
              {placeholdersIn(rec.command).has('request_id') ? null : (
                <button type="button" onClick={() => set({ reconcile: { ...rec, command: [...rec.command, '{request_id}'] } })}>
                  Add <code>{'{request_id}'}</code>
                </button>
              )}
              <button type="button" className="danger" onClick={() => set({ reconcile: null })}>
                Remove the reconcile check
              </button>
            </div>
            <div className="field-grid">
              <Field label="Reconcile timeout (seconds)" error={at('reconcile.timeout_s')} hint={wholeHint(RECONCILE_FIELDS.timeout_s)}>
                <input value={rec.timeout_s} onChange={(e) => set({ reconcile: { ...rec, timeout_s: e.target.value } })} inputMode="numeric" placeholder={String(RECONCILE_FIELDS.timeout_s.type.default)} />
              </Field>
            </div>
          </>
        )}
      </section>
    </div>
  );
}

/** "Runs of this operation at once. From 1 to 64; default 1." */
function wholeHint(f: FieldSpec): string {
  return f.type.kind === 'whole' ? `${f.about} From ${f.type.min} to ${f.type.max}; default ${f.type.default}.` : f.about;
}

function approvalDefaultText(scope: string): string {
  const s = scope === '' ? OPERATION_FIELDS.scope.type.default : (SCOPES as readonly string[]).includes(scope) ? (scope as Scope) : null;
  return s === null ? 'Default (depends on the scope)' : `Default (${approvalDefault(s)} for ${s})`;
}

function freshArg(f: OpForm): string {
  const names = new Set(f.args.map((a) => a.name));
  for (let i = 1; ; i++) if (!names.has(`arg${i}`)) return `arg${i}`;
}

function freshEnv(f: OpForm): string {
  const names = new Set(f.env.map((e) => e.name));
  for (let i = 1; ; i++) if (!names.has(`VAR${i}`)) return `VAR${i}`;
}
