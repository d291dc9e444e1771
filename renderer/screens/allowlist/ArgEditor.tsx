// One argument of an operation: its name, type, constraints, whether it is required and its default.
import { useEffect, useId, useRef } from 'react';
import { api, errorText } from '../../api';
import { Field } from '../../components/Field';
import { toast } from '../../stores/toasts';
import { fieldError, type Problem } from './problems';
import { InvalidOption } from './InvalidOption';
import { SharedWarning } from './SharedWarning';
import { ARG_TYPES, ARG_TYPE_ABOUT, ARG_TYPE_FIELDS, SCALAR_TYPES, type ArgTypeName } from '../../../shared/allowlist/schema';
import { REQUIRED, emptyType, type ArgForm, type TypeForm } from './form';

const MAX_ITEMS = ARG_TYPE_FIELDS.array.max_items.type;
const MAX_LENGTH = ARG_TYPE_FIELDS.string.max_length.type;

interface Props {
  arg: ArgForm;
  position: number;
  opIndex: number;
  problems: Problem[];
  onChange: (a: ArgForm) => void;
  onRemove: () => void;
}

export function ArgEditor({ arg, position, opIndex, problems, onChange, onRemove }: Props) {
  const at = (sub: string) => fieldError(problems, opIndex, `args.${arg.name}${sub ? `.${sub}` : ''}`, true);
  const set = (p: Partial<ArgForm>) => onChange({ ...arg, ...p });
  const setType = (type: string) => set({ ...emptyType(type), description: arg.description, items: arg.items.type ? arg.items : emptyType('string') });
  return (
    <fieldset className="arg-card" aria-label={`Argument ${position + 1} ${arg.name}`}>
      <legend>
        Argument {position + 1}: <code>{arg.name || '(unnamed)'}</code>
      </legend>
      <div className="field-grid">
        <Field label="Name" error={at('')} hint="Used as {name} in the command.">
          <input value={arg.name} onChange={(e) => set({ name: e.target.value.trim() })} spellCheck={false} autoComplete="off" />
        </Field>
        <Field label="Type" error={at('type')} hint={Object.hasOwn(ARG_TYPE_ABOUT, arg.type) ? ARG_TYPE_ABOUT[arg.type as ArgTypeName] : undefined}>
          <select value={arg.type} onChange={(e) => setType(e.target.value)}>
            {!ARG_TYPES.includes(arg.type as never) ? <option value={arg.type}>{arg.type ? `(invalid: ${arg.type})` : '(none)'}</option> : null}
            {ARG_TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Description" error={at('description')} hint="Shown to the agent in the catalog.">
          <input value={arg.description} onChange={(e) => set({ description: e.target.value })} />
        </Field>
        <Field label="Required" error={at('required')} hint="Automatic: required unless it has a default.">
          <select value={arg.required} onChange={(e) => set({ required: e.target.value })}>
            <InvalidOption value={arg.required} known={REQUIRED} />
            <option value="">Automatic</option>
            <option value="required">Required</option>
            <option value="optional">Optional</option>
          </select>
        </Field>
      </div>
      {arg.type === 'array' ? (
        <div className="field-grid">
          <Field label="Item type" error={at('items.type')}>
            <select value={arg.items.type} onChange={(e) => set({ items: emptyType(e.target.value) })}>
              {!SCALAR_TYPES.includes(arg.items.type as never) ? <option value={arg.items.type}>{arg.items.type ? `(invalid: ${arg.items.type})` : '(none)'}</option> : null}
              {SCALAR_TYPES.map((t) => (
                <option key={t} value={t}>
                  {t}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Max items" error={at('max_items')} hint={`From ${MAX_ITEMS.min} to ${MAX_ITEMS.max}; default ${MAX_ITEMS.default}.`}>
            <input value={arg.max_items} onChange={(e) => set({ max_items: e.target.value })} inputMode="numeric" placeholder={String(MAX_ITEMS.default)} />
          </Field>
          <TypeFields t={arg.items} forItems at={(k) => at(`items.${k}`)} onChange={(items) => set({ items })} />
        </div>
      ) : (
        <div className="field-grid">
          <TypeFields t={arg} forItems={false} at={at} onChange={(t) => set(t)} />
        </div>
      )}
      <div className="arg-default">
        <label className="check">
          <input type="checkbox" checked={arg.hasDefault} onChange={(e) => set({ hasDefault: e.target.checked, required: e.target.checked && arg.required === 'required' ? '' : arg.required })} /> Has a default
        </label>
        {arg.hasDefault ? (
          <Field label="Default" error={at('default')} hint={arg.type === 'array' ? 'One item per line.' : arg.type === 'boolean' ? 'true or false.' : 'Used when a request leaves the argument out.'}>
            {arg.type === 'array' ? (
              <textarea rows={2} value={arg.default} onChange={(e) => set({ default: e.target.value })} />
            ) : (
              <input value={arg.default} onChange={(e) => set({ default: e.target.value })} />
            )}
          </Field>
        ) : null}
      </div>
      <div className="row arg-actions">
        <button type="button" className="danger" onClick={onRemove}>
          Remove argument {arg.name}
        </button>
      </div>
    </fieldset>
  );
}

/** Appends a folder from the OS's picker to a one-per-line list. */
async function pickInto(current: string, done: (next: string) => void): Promise<void> {
  try {
    const picked = await api.dialog.pickFolder({ title: 'A folder the argument may point into' });
    if (picked) done(current.trim() ? `${current.replace(/\n+$/, '')}\n${picked}` : picked);
  } catch (e) {
    toast(errorText(e), 'error');
  }
}

function TypeFields<T extends TypeForm>({ t, forItems, at, onChange }: { t: T; forItems: boolean; at: (k: string) => string | null; onChange: (t: T) => void }) {
  const set = (p: Partial<TypeForm>) => onChange({ ...t, ...p });
  switch (t.type) {
    case 'string':
      return (
        <>
          <Field label="Pattern" error={at('pattern')} hint="A regular expression the whole value must match.">
            <input value={t.pattern} onChange={(e) => set({ pattern: e.target.value })} spellCheck={false} className="mono" placeholder="[A-Za-z0-9_-]*" />
          </Field>
          <Field label="Max length" error={at('max_length')} hint={`Characters, ${MAX_LENGTH.min} to ${MAX_LENGTH.max}; default ${MAX_LENGTH.default}.`}>
            <input value={t.max_length} onChange={(e) => set({ max_length: e.target.value })} inputMode="numeric" placeholder={String(MAX_LENGTH.default)} />
          </Field>
          <EnumEditor values={t.enum} error={at('enum')} onChange={(values) => set({ enum: values })} />
          <label className="check">
            <input type="checkbox" checked={t.allow_dash === true} onChange={(e) => set({ allow_dash: e.target.checked ? true : null })} /> Allow a leading “-” (could be read as an
            option)
          </label>
        </>
      );
    case 'integer':
      return (
        <>
          <Field label="Minimum" error={at('min')}>
            <input value={t.min} onChange={(e) => set({ min: e.target.value })} inputMode="numeric" />
          </Field>
          <Field label="Maximum" error={at('max')}>
            <input value={t.max} onChange={(e) => set({ max: e.target.value })} inputMode="numeric" />
          </Field>
        </>
      );
    case 'boolean':
      return forItems ? null : (
        <Field label="Flag" error={at('flag')} hint="Added as its own element when true, e.g. --verbose. Use {name} alone in the command.">
          <input value={t.flag} onChange={(e) => set({ flag: e.target.value })} spellCheck={false} className="mono" />
        </Field>
      );
    case 'path':
      return (
        <>
          <div className="within-field">
            <Field label="Allowed folders" error={at('within')} hint="One per line (absolute or ~/…); default: the working folder.">
              <textarea rows={2} value={t.within} onChange={(e) => set({ within: e.target.value })} spellCheck={false} />
            </Field>
            <button type="button" onClick={() => void pickInto(t.within, (within) => set({ within }))}>
              Add folder…
            </button>
          </div>
          <label className="check">
            <input type="checkbox" checked={t.must_exist !== false} onChange={(e) => set({ must_exist: e.target.checked ? (t.must_exist === null ? null : true) : false })} /> Must
            exist
          </label>
          <label className="check">
            <input type="checkbox" checked={t.shared_with_sandbox === true} onChange={(e) => set({ shared_with_sandbox: e.target.checked ? true : null })} /> The sandbox can
            write in these folders
          </label>
          {t.shared_with_sandbox === true ? <SharedWarning what="these folders" error={at('shared_with_sandbox')} /> : null}
        </>
      );
    default:
      return null;
  }
}

/**
 * The allowed values of a string, one box each, exactly as typed: commas and spaces are part of a
 * value. Enter in a box adds a box after it; removing one moves the focus to its neighbour.
 */
function EnumEditor({ values, error, onChange }: { values: string[]; error: string | null; onChange: (values: string[]) => void }) {
  const list = useRef<HTMLOListElement>(null);
  const errorId = useId();
  // The row to focus once the change is rendered (in the commit that shows the new list).
  const pendingFocus = useRef<number | null>(null);
  useEffect(() => {
    const i = pendingFocus.current;
    if (i === null) return;
    pendingFocus.current = null;
    const inputs = list.current?.querySelectorAll('input');
    if (inputs && inputs.length > 0) inputs[Math.max(0, Math.min(i, inputs.length - 1))]!.focus();
    else list.current?.parentElement?.querySelector<HTMLButtonElement>('.enum-add')?.focus();
  }, [values]);
  const focusRow = (i: number) => {
    pendingFocus.current = i;
  };
  const insert = (at: number) => {
    onChange([...values.slice(0, at), '', ...values.slice(at)]);
    focusRow(at);
  };
  const remove = (i: number) => {
    onChange(values.filter((_, j) => j !== i));
    focusRow(i === values.length - 1 ? i - 1 : i);
  };
  return (
    <div className={`field enum-field${error ? ' field-error' : ''}`} role="group" aria-labelledby={`${errorId}-label`} aria-describedby={errorId}>
      <div className="enum-label" id={`${errorId}-label`}>
        Allowed values
      </div>
      {values.length > 0 ? (
        <ol className="enum-values" ref={list}>
          {values.map((v, i) => (
            <li key={i} className="part-row">
              <input
                aria-label={`Allowed value ${i + 1}`}
                value={v}
                onChange={(e) => onChange(values.map((x, j) => (j === i ? e.target.value : x)))}
                onKeyDown={(e) => {
                  if (e.key === 'Enter') {
                    e.preventDefault();
                    insert(i + 1);
                  }
                }}
                aria-invalid={error ? true : undefined}
                spellCheck={false}
                autoComplete="off"
                className="mono"
              />
              <button type="button" className="icon-button" aria-label={`Remove allowed value ${i + 1}`} onClick={() => remove(i)}>
                ×
              </button>
            </li>
          ))}
        </ol>
      ) : (
        <ol className="enum-values" ref={list} hidden />
      )}
      <button type="button" className="enum-add" onClick={() => insert(values.length)}>
        Add allowed value
      </button>
      <div id={errorId} className={error ? 'field-message error-text' : 'field-message muted'}>
        {error ?? (values.length ? 'One value per box, exactly as typed; Enter adds another.' : 'None: any value is allowed.')}
      </div>
    </div>
  );
}
