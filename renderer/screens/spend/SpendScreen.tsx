// Spend ceilings: how much the sandbox may run within a rolling window (all keys together or per key),
// what happens at the limit, and how much of each limit is used right now.
import { useEffect, useState } from 'react';
import type { CeilingView, KeyView, SettingsView, SpendView } from '../../../shared/ipc/views';
import { api } from '../../api';
import { EmptyState } from '../../components/EmptyState';
import { Meter } from '../../components/Meter';
import { Page } from '../../components/Page';
import { useLoad } from '../../lib/useLoad';
import { confirmAction } from '../../stores/confirm';
import { useStatus } from '../../stores/status';
import { toast } from '../../stores/toasts';
import { settingError } from '../settings/settingError';
import { CeilingForm } from './CeilingForm';
import { formatSeconds } from './duration';
import './spend.css';

/** Spend also changes without any event (runs leave the window): look again this often. */
const REFRESH_MS = 15_000;

export function SpendScreen() {
  const live = useStatus((s) => JSON.stringify(s.spend));
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => setTick((n) => n + 1), REFRESH_MS);
    return () => clearInterval(t);
  }, []);
  const spend = useLoad(() => api.spend.get(), [live, tick]);
  const settings = useLoad(() => api.settings.get(), []);
  const keysVersion = useStatus((s) => `${s.keys.active}|${s.keys.revoked}`);
  const keys = useLoad(() => api.keys.list(), [keysVersion]);
  // null: no form; 'new': adding; else the name of the ceiling being edited.
  const [editing, setEditing] = useState<string | null>(null);
  const [current, setCurrent] = useState<SettingsView | null>(null);

  const s = current ?? settings.data;
  const ceilings = s?.ceilings ?? [];
  const keyList = keys.data ?? [];

  const save = async (next: CeilingView[]): Promise<string | null> => {
    try {
      const saved = await api.settings.set({ name: 'ceilings', value: next });
      setCurrent(saved);
      spend.reload();
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
    const failure = await save(ceilings.filter((x) => x.name !== c.name));
    if (failure) toast(`Could not delete the ceiling: ${failure}`, 'error');
    else toast(`Ceiling “${c.name}” deleted`);
  };

  const editedCeiling = editing && editing !== 'new' ? (ceilings.find((c) => c.name === editing) ?? null) : null;

  return (
    <Page
      title="Spend"
      description="Ceilings cap how much the sandbox may run within a rolling window: runs, cost units or run time, for all keys together or for each key. At a ceiling, requests are rejected or wait for you."
      actions={
        editing === null && ceilings.length > 0 ? (
          <button type="button" className="primary" onClick={() => setEditing('new')}>
            Add ceiling…
          </button>
        ) : null
      }
    >
      {settings.error ? (
        <div className="callout callout-bad" role="alert">
          Could not load the settings: {settings.error}
        </div>
      ) : null}
      {spend.error ? (
        <div className="callout callout-bad" role="alert">
          Could not load the spend: {spend.error}
        </div>
      ) : null}
      {editing !== null && s ? (
        <CeilingForm
          key={editing}
          initial={editedCeiling}
          otherNames={ceilings.filter((c) => c.name !== editing).map((c) => c.name)}
          keys={keyList}
          retentionDays={s.retention_ledger_days}
          onCancel={() => setEditing(null)}
          onSave={async (c) => {
            const next = editedCeiling ? ceilings.map((x) => (x.name === editedCeiling.name ? c : x)) : [...ceilings, c];
            const failure = await save(next);
            if (!failure) {
              toast(editedCeiling ? `Ceiling “${c.name}” saved` : `Ceiling “${c.name}” added`);
              setEditing(null);
            }
            return failure;
          }}
        />
      ) : null}
      {s === undefined && !settings.error ? <p className="muted">Loading…</p> : null}
      {s && ceilings.length === 0 && editing === null ? (
        <EmptyState
          title="No spend ceilings"
          action={
            <button type="button" className="primary" onClick={() => setEditing('new')}>
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
          rows={(spend.data ?? []).filter((r) => r.ceiling.name === c.name)}
          keys={keyList}
          disabled={editing !== null}
          onEdit={() => setEditing(c.name)}
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
  return s === 3600 ? 'the last hour' : s === 86400 ? 'the last day' : s === 60 ? 'the last minute' : `the last ${formatSeconds(s)}`;
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
    out.push({ what: 'Run time', value: r.spend.run_time_s, max: c.max_run_time_s, text: `${formatSeconds(r.spend.run_time_s)} / ${formatSeconds(c.max_run_time_s)}` });
  return out;
}
