// Spend ceilings: how much the sandbox may run within a rolling window (all keys together or per key),
// what happens at the limit, and how much of each limit is used right now (from the live status,
// which the host pushes on every change).
import { useState } from 'react';
import type { CeilingView, KeyView, SpendView } from '../../../shared/ipc/views';
import { EmptyState } from '../../components/EmptyState';
import { Meter } from '../../components/Meter';
import { Page } from '../../components/Page';
import { formatDuration, formatSpan } from '../../lib/format';
import { settingError } from '../../lib/settingError';
import { confirmAction } from '../../stores/confirm';
import { useKeys } from '../../stores/keys';
import { refreshSettings, saveSetting, useSettings, useSettingsError } from '../../stores/settings';
import { useStatus } from '../../stores/status';
import { toast } from '../../stores/toasts';
import { CeilingForm } from './CeilingForm';
import './spend.css';

const NO_KEYS: KeyView[] = [];
const NO_SPEND: SpendView[] = [];

/** What the form is doing: adding a ceiling, or editing the one it opened with. */
type Editing = { mode: 'new' } | { mode: 'edit'; ceiling: CeilingView };

/** One change to the ceilings, applied to the host's current list: the new list, or why it cannot be. */
type Edit = (current: CeilingView[]) => CeilingView[] | string;

export function SpendScreen() {
  const spend = useStatus((s) => s.spend) ?? NO_SPEND;
  // The settings follow the host (stores/settings.ts); the form's opening and every save read them
  // again, so its checks use the current retention.
  const s = useSettings();
  const settingsError = useSettingsError();
  const keys = useKeys() ?? NO_KEYS;
  const [editing, setEditing] = useState<Editing | null>(null);
  const ceilings = s?.ceilings ?? [];

  const open = (next: Editing) => {
    void refreshSettings().catch(() => {});
    setEditing(next);
  };

  /** Re-reads the ceilings, applies only this edit and saves: changes made elsewhere stay. */
  const change = async (edit: Edit): Promise<string | null> => {
    try {
      const next = edit((await refreshSettings()).ceilings);
      if (typeof next === 'string') return next;
      await saveSetting('ceilings', next);
      return null;
    } catch (e) {
      return settingError(e);
    }
  };

  const remove = async (c: CeilingView) => {
    const ok = await confirmAction({
      title: `Delete ceiling “${c.name}”?`,
      body: 'Requests are no longer counted against it. Spend already recorded stays in the ledger.',
      confirmLabel: 'Delete ceiling',
      danger: true,
    });
    if (!ok) return;
    const failure = await change((cs) => cs.filter((x) => x.name !== c.name));
    if (failure) toast(`Could not delete the ceiling: ${failure}`, 'error');
    else toast(`Ceiling “${c.name}” deleted`);
  };

  const save = async (c: CeilingView): Promise<string | null> => {
    const was = editing?.mode === 'edit' ? editing.ceiling.name : null;
    const failure = await change((cs) => {
      if (was !== null && !cs.some((x) => x.name === was)) return `Ceiling “${was}” was deleted meanwhile (elsewhere): cancel, then add it again.`;
      if (c.name !== was && cs.some((x) => x.name === c.name)) return `There is already a ceiling named “${c.name}” (added elsewhere meanwhile).`;
      return was === null ? [...cs, c] : cs.map((x) => (x.name === was ? c : x));
    });
    if (!failure) {
      toast(was === null ? `Ceiling “${c.name}” added` : `Ceiling “${c.name}” saved`);
      setEditing(null);
    }
    return failure;
  };

  const edited = editing?.mode === 'edit' ? editing.ceiling : null;

  return (
    <Page
      title="Spend"
      description="Ceilings cap how much the sandbox may run within a rolling window: runs, cost units or run time, for all keys together or for each key. At a ceiling, requests are rejected or wait for you."
      actions={
        editing === null && ceilings.length > 0 ? (
          <button type="button" className="primary" onClick={() => open({ mode: 'new' })}>
            Add ceiling…
          </button>
        ) : null
      }
    >
      {settingsError ? (
        <div className="callout callout-bad" role="alert">
          Could not load the settings: {settingsError}
        </div>
      ) : null}
      {editing !== null && s ? (
        <CeilingForm
          key={edited?.name ?? ''}
          initial={edited}
          otherNames={ceilings.filter((c) => c.name !== edited?.name).map((c) => c.name)}
          keys={keys}
          retentionDays={s.retention_ledger_days}
          onCancel={() => setEditing(null)}
          onSave={save}
        />
      ) : null}
      {s === undefined && !settingsError ? <p className="muted">Loading…</p> : null}
      {s && ceilings.length === 0 && editing === null ? (
        <EmptyState
          title="No spend ceilings"
          action={
            <button type="button" className="primary" onClick={() => open({ mode: 'new' })}>
              Add a ceiling
            </button>
          }
        >
          Nothing limits how often the sandbox runs allowed operations. Add a ceiling, e.g. at most 100 runs a day for all keys, or one hour of run
          time per key.
        </EmptyState>
      ) : null}
      {ceilings.map((c) => (
        <CeilingCard
          key={c.name}
          ceiling={c}
          rows={spend.filter((r) => r.ceiling.name === c.name)}
          keys={keys}
          disabled={editing !== null}
          onEdit={() => open({ mode: 'edit', ceiling: c })}
          onDelete={() => void remove(c)}
        />
      ))}
    </Page>
  );
}

function who(c: CeilingView, keys: KeyView[]): string {
  if (c.per === 'global') return 'All keys together';
  if (!c.key_id) return 'Each key on its own';
  const k = keys.find((x) => x.key_id === c.key_id);
  return `Only key ${k ? `${k.name} (${c.key_id})` : c.key_id}`;
}

function windowText(s: number): string {
  return s === 3600 ? 'the last hour' : s === 86400 ? 'the last day' : s === 60 ? 'the last minute' : `the last ${formatSpan(s)}`;
}

function CeilingCard({
  ceiling: c,
  rows,
  keys,
  disabled,
  onEdit,
  onDelete,
}: {
  ceiling: CeilingView;
  rows: SpendView[];
  keys: KeyView[];
  disabled: boolean;
  onEdit: () => void;
  onDelete: () => void;
}) {
  const titleId = `ceiling-${c.name}`;
  const keyName = (id: string | null) => (id ? (keys.find((k) => k.key_id === id)?.name ?? id) : 'All keys');
  return (
    <section className="card ceiling" aria-labelledby={titleId}>
      <div className="ceiling-head">
        <div>
          <h2 id={titleId}>{c.name}</h2>
          <div className="muted ceiling-summary">
            {who(c, keys)} · over {windowText(c.window_s)} ·{' '}
            {c.action === 'reject' ? <span className="badge badge-bad">At the limit: reject</span> : <span className="badge badge-warn">At the limit: ask me</span>}
          </div>
        </div>
        <div className="row">
          <button type="button" onClick={onEdit} disabled={disabled} aria-label={`Edit ${c.name}`}>
            Edit…
          </button>
          <button type="button" className="danger" onClick={onDelete} disabled={disabled} aria-label={`Delete ${c.name}`}>
            Delete…
          </button>
        </div>
      </div>
      {rows.length === 0 ? (
        <p className="muted ceiling-empty">{c.per === 'key' ? 'No active key is counted against this ceiling yet.' : 'Nothing counted yet.'}</p>
      ) : (
        <table className="ceiling-usage">
          <colgroup>
            <col className="ceiling-col-key" />
            <col className="ceiling-col-what" />
            <col />
            <col className="ceiling-col-figure" />
          </colgroup>
          <thead className="offscreen">
            <tr>
              <th scope="col">Keys</th>
              <th scope="col">Limit</th>
              <th scope="col">Share used</th>
              <th scope="col">Used of the limit</th>
            </tr>
          </thead>
          <tbody>
            {rows.flatMap((r) =>
              limitsOf(c, r).map((l, i, all) => (
                <tr key={`${r.key_id ?? ''}-${l.what}`} className={i === 0 ? 'ceiling-first' : undefined}>
                  {i === 0 ? (
                    <th scope="rowgroup" rowSpan={all.length} className="ceiling-key">
                      {keyName(r.key_id)}
                    </th>
                  ) : null}
                  <td className="ceiling-what">{l.what}</td>
                  <td className="ceiling-bar">
                    <Meter value={l.value} max={l.max} label={`${c.name}${c.per === 'key' ? ` for ${keyName(r.key_id)}` : ''}: ${l.what.toLowerCase()}`} />
                  </td>
                  <td className={`ceiling-figure${l.value >= l.max ? ' ceiling-full' : ''}`}>
                    {l.text}
                    {l.value >= l.max ? <span className="badge badge-bad">Full</span> : null}
                  </td>
                </tr>
              )),
            )}
          </tbody>
        </table>
      )}
    </section>
  );
}

function limitsOf(c: CeilingView, r: SpendView): { what: string; value: number; max: number; text: string }[] {
  const out: { what: string; value: number; max: number; text: string }[] = [];
  if (c.max_runs !== undefined) out.push({ what: 'Runs', value: r.spend.runs, max: c.max_runs, text: `${r.spend.runs} / ${c.max_runs}` });
  if (c.max_cost !== undefined) out.push({ what: 'Cost units', value: r.spend.cost, max: c.max_cost, text: `${r.spend.cost} / ${c.max_cost}` });
  if (c.max_run_time_s !== undefined)
    out.push({ what: 'Run time', value: r.spend.run_time_s, max: c.max_run_time_s, text: `${r.spend.run_time_s > 0 ? formatDuration(r.spend.run_time_s * 1000) : '0 s'} / ${formatSpan(c.max_run_time_s)}` });
  return out;
}
