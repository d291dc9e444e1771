// The allowlist editor: the operations on the left, the selected one's form (or the whole file as YAML)
// on the right, checked as you type; a preview and a dry run of the selected operation; Save (Ctrl+S)
// writes the file keeping its comments, and never over an edit made to the file outside the app.
import { useEffect, useMemo, useState, type KeyboardEvent as ReactKeyboardEvent } from 'react';
import { api, errorText } from '../../api';
import { EmptyState } from '../../components/EmptyState';
import { Page } from '../../components/Page';
import { confirmAction, questionOpen } from '../../stores/confirm';
import { toast } from '../../stores/toasts';
import { OpEditor } from './OpEditor';
import { OutsideChange } from './OutsideChange';
import { DisabledOperations } from './DisabledOperations';
import { RefusedFile } from './RefusedFile';
import { describeProblem, opIndexOf, problemsOf, type Problem } from './problems';
import {
  addOp,
  deleteOp,
  editForm,
  loadEditor,
  pollDisk,
  requestSave,
  revert,
  select,
  setCheck,
  useCheck,
  useDirty,
  useEditError,
  useForm,
  useIsLoaded,
  useLastCheck,
  useLoadError,
  useOpSerial,
  usePath,
  useSaving,
  useSelected,
  useText,
} from './store';
import { TryOut } from './TryOut';
import { YamlView } from './YamlView';
import { APPROVALS, OPERATION_FIELDS, SCOPES, approvalDefault, type Scope } from '../../../shared/allowlist/schema';
import type { OpForm } from './form';
import { readOperations } from './readForm';
import './allowlist.css';

const POLL_MS = 2000;
const CHECK_DELAY_MS = 250;

export function AllowlistScreen() {
  const loaded = useIsLoaded();
  const loadError = useLoadError();
  const text = useText();
  const dirty = useDirty();
  const saving = useSaving();
  const check = useCheck();
  const lastCheck = useLastCheck();
  const path = usePath();
  const [tab, setTab] = useState<'form' | 'yaml'>('form');
  const names = useMemo(() => readOperations(text).ops.map((o) => o?.name), [text]);

  useEffect(() => {
    void loadEditor();
    const timer = setInterval(() => void pollDisk(), POLL_MS);
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === 's') {
        e.preventDefault();
        // Not behind an open dialog (a confirmation is a question to answer first).
        if (e.repeat || questionOpen()) return;
        requestSave();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => {
      clearInterval(timer);
      window.removeEventListener('keydown', onKey);
    };
  }, []);

  // Validation as you type: the host's own validator, a moment after the last keystroke.
  useEffect(() => {
    if (!loaded || check) return;
    let live = true;
    const timer = setTimeout(() => {
      api.allowlist.validate({ text }).then(
        (c) => live && setCheck(text, c),
        (e: unknown) => live && toast(errorText(e), 'error'),
      );
    }, CHECK_DELAY_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [text, loaded, check]);

  if (loadError) {
    return (
      <Page title="Allowlist">
        <div className="callout callout-bad" role="alert">
          Could not read allowlist.yaml: {loadError}
        </div>
      </Page>
    );
  }
  if (!loaded) {
    return (
      <Page title="Allowlist">
        <p className="muted">Loading…</p>
      </Page>
    );
  }

  // While a check is on its way, the last verdict still marks fields (it is at most a moment old).
  const problems = (check ?? lastCheck)?.problems ?? [];
  const invalid = check !== null && !check.ok;
  const revertAll = async () => {
    if (await confirmAction({ title: 'Discard unsaved changes?', body: 'The editor goes back to allowlist.yaml as it was last read or saved.', confirmLabel: 'Discard changes', danger: true })) revert();
  };

  return (
    <Page
      title="Allowlist"
      description={
        <>
          The only things the sandbox may ask this computer to run. Saved to <code>{path}</code>; the host uses a saved version within a second.
        </>
      }
      actions={
        <>
          <span className="save-state" role="status">
            {dirty ? <span className="badge badge-warn">Unsaved changes</span> : <span className="muted">All changes saved</span>}
          </span>
          <button type="button" onClick={() => void revertAll()} disabled={!dirty || saving}>
            Discard
          </button>
          <button
            type="button"
            className="primary"
            onClick={requestSave}
            disabled={!dirty || saving || invalid}
            title="Save (Ctrl+S)"
            aria-keyshortcuts="Control+S"
            aria-describedby={invalid ? 'problem-summary' : undefined}
          >
            {saving ? 'Saving…' : 'Save'}
          </button>
        </>
      }
    >
      <OutsideChange />
      <RefusedFile />
      <DisabledOperations />
      <ProblemSummary check={check} problems={problems} names={names} onGo={(p) => {
        const i = opIndexOf(p);
        if (i !== null && readOperations(text).syntaxErrors.length === 0) {
          select(i);
          setTab('form');
        } else setTab('yaml');
      }} />
      <div className="allowlist-layout">
        <OpList text={text} problems={problems} />
        <div className="allowlist-main">
          <div className="tabs" role="tablist" aria-label="View">
            <button type="button" role="tab" id="tab-form" aria-controls="panel-form" aria-selected={tab === 'form'} tabIndex={tab === 'form' ? 0 : -1} onClick={() => setTab('form')} onKeyDown={tabKeys(setTab)}>
              Form
            </button>
            <button type="button" role="tab" id="tab-yaml" aria-controls="panel-yaml" aria-selected={tab === 'yaml'} tabIndex={tab === 'yaml' ? 0 : -1} onClick={() => setTab('yaml')} onKeyDown={tabKeys(setTab)}>
              YAML
            </button>
          </div>
          {tab === 'form' ? (
            <div role="tabpanel" id="panel-form" aria-labelledby="tab-form">
              <FormPanel text={text} problems={problems} />
            </div>
          ) : (
            <div role="tabpanel" id="panel-yaml" aria-labelledby="tab-yaml">
              <YamlView problems={problems} />
            </div>
          )}
        </div>
      </div>
    </Page>
  );
}

function tabKeys(setTab: (t: 'form' | 'yaml') => void) {
  return (e: ReactKeyboardEvent<HTMLButtonElement>) => {
    if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
    e.preventDefault();
    const next = e.currentTarget.id === 'tab-form' ? 'yaml' : 'form';
    setTab(next);
    document.getElementById(`tab-${next}`)?.focus();
  };
}

function ProblemSummary({ check, problems, names, onGo }: { check: ReturnType<typeof useCheck>; problems: Problem[]; names: (string | undefined)[]; onGo: (p: Problem) => void }) {
  if (!check || check.ok) return null;
  return (
    <div className="callout callout-bad problem-summary" id="problem-summary" role="alert">
      <strong>
        {problems.length === 1 ? 'One problem' : `${problems.length} problems`} to fix before saving
      </strong>
      <ul>
        {problems.slice(0, 8).map((p, i) => (
          <li key={i}>
            <button type="button" className="link" onClick={() => onGo(p)}>
              {describeProblem(p, names)}
            </button>
          </li>
        ))}
        {problems.length > 8 ? <li className="muted">…and {problems.length - 8} more (see the YAML view)</li> : null}
      </ul>
    </div>
  );
}

function OpList({ text, problems }: { text: string; problems: Problem[] }) {
  const selected = useSelected();
  const ops = useMemo(() => readOperations(text), [text]);
  return (
    <nav className="op-list" aria-label="Operations">
      <h2 className="op-list-title">Operations</h2>
      {ops.syntaxErrors.length > 0 ? <p className="error-text op-list-note">The YAML has a syntax error: see the YAML view.</p> : null}
      {ops.syntaxErrors.length === 0 && ops.ops.length === 0 ? <p className="muted op-list-note">None yet.</p> : null}
      <ul>
        {ops.ops.map((op, i) => {
          const bad = problemsOf(problems, i).length > 0;
          return (
            <li key={i}>
              <button type="button" aria-current={selected === i ? 'true' : undefined} onClick={() => select(i)} className="op-item">
                <span className="op-item-name">
                  <code>{op?.name || `(operation ${i + 1})`}</code>
                  {bad ? (
                    <span className="badge badge-bad" aria-label="has problems" title="Has problems">
                      !
                    </span>
                  ) : null}
                </span>
                {op ? <span className="op-item-meta muted">{policyText(op)}</span> : null}
              </button>
            </li>
          );
        })}
      </ul>
      <button type="button" onClick={addOp} disabled={ops.syntaxErrors.length > 0} className="op-add">
        Add operation
      </button>
    </nav>
  );
}

/** "read · no approval"; an invalid value is named as such, never shown as a default. */
function policyText(op: OpForm): string {
  const scope = op.scope === '' ? OPERATION_FIELDS.scope.type.default : (SCOPES as readonly string[]).includes(op.scope) ? (op.scope as Scope) : null;
  const approval = op.approval === '' ? (scope === null ? null : approvalDefault(scope)) : (APPROVALS as readonly string[]).includes(op.approval) ? op.approval : null;
  return `${scope ?? 'invalid scope'} · ${approval === null ? (op.approval === '' ? 'approval unclear' : 'invalid approval') : approval === 'never' ? 'no approval' : 'approval'}`;
}

function FormPanel({ text, problems }: { text: string; problems: Problem[] }) {
  const selected = useSelected();
  const form = useForm();
  const editError = useEditError();
  if (editError && !form) {
    return (
      <div className="callout callout-warn" role="alert">
        {editError}
      </div>
    );
  }
  if (selected === null || !form) {
    return (
      <EmptyState
        title="No operation selected"
        action={
          <button type="button" className="primary" onClick={addOp}>
            Add an operation
          </button>
        }
      >
        Pick one on the left, or add one: the program it runs, the arguments the agent may fill in, and whether you approve each run.
      </EmptyState>
    );
  }
  return <SelectedOp index={selected} form={form} text={text} problems={problems} editError={editError} />;
}

function SelectedOp({ index, form, text, problems, editError }: { index: number; form: OpForm; text: string; problems: Problem[]; editError: string | null }) {
  // The try-out's samples and dry-run result belong to this operation: another one gets a fresh one.
  const opSerial = useOpSerial();
  const remove = async () => {
    const ok = await confirmAction({
      title: `Delete operation “${form.name || index + 1}”?`,
      body: 'It is removed from the editor; the agent can no longer ask for it once you save.',
      confirmLabel: 'Delete operation',
      danger: true,
    });
    if (ok) deleteOp(index);
  };
  return (
    <>
      <div className="op-head">
        <h2>
          <code>{form.name || '(unnamed)'}</code>
        </h2>
        <button type="button" className="danger" onClick={() => void remove()}>
          Delete operation
        </button>
      </div>
      {editError ? (
        <div className="callout callout-warn" role="alert">
          {editError}
        </div>
      ) : null}
      <OpEditor form={form} index={index} problems={problems} onChange={editForm} />
      <TryOut key={opSerial} text={text} form={form} />
    </>
  );
}
