// The audit log: everything the host did, searchable (words match as prefixes) and filterable by
// spool, request state, operation, key, kind and time; a detail panel per entry; export of the whole search.
import { useEffect, useMemo, useState, type ReactElement } from 'react';
import { STATES, type RequestState } from '../../../shared/protocol/types';
import { EmptyState } from '../../components/EmptyState';
import { Field } from '../../components/Field';
import { Page } from '../../components/Page';
import { stateLabel } from '../../components/StateBadge';
import { useHostVersion, useStatus } from '../../stores/status';
import { useKeys } from '../../stores/keys';
import { SpoolSwitcher } from '../../components/SpoolSwitcher';
import { AuditTable } from './AuditTable';
import { EntryDetail } from './EntryDetail';
import { isFiltered, isoToLocalInput, KNOWN_KINDS, kindAbout, kindLabel, RANGES, rangeError, type Filters, type RangePreset } from './query';
import {
  cancelExport,
  clearFilters,
  exportSearch,
  refreshNewest,
  search,
  searchedOnce,
  setFilters,
  useEntries,
  useExporting,
  useFilters,
  useHasMore,
  useLoading,
  useOpenEntry,
  useSearched,
  useSearchError,
  useValidQuery,
} from './store';
import './audit.css';

const DEBOUNCE_MS = 250;
const EXPORT_NOTE = 'The file holds each entry in full (commands and details) and is saved as an ordinary file, readable like anything else you save there.';

export function AuditScreen() {
  const entries = useEntries();
  const exporting = useExporting();
  const loading = useLoading();
  const valid = useValidQuery();
  const searched = useSearched();

  // Search when the screen opens (the filters are kept from the last visit), and follow the log as it grows.
  useEffect(() => {
    if (searchedOnce()) void refreshNewest();
    else void search();
  }, []);
  const version = useHostVersion();
  useEffect(() => {
    if (version > 0) void refreshNewest();
  }, [version]);
  // Also every few seconds (entries the host writes without a change of state), but not while the
  // window is hidden (most of the time, for a tray app); showing it again catches up at once.
  useEffect(() => {
    const refresh = () => {
      if (!document.hidden) void refreshNewest();
    };
    const timer = setInterval(refresh, 5000);
    document.addEventListener('visibilitychange', refresh);
    return () => {
      clearInterval(timer);
      document.removeEventListener('visibilitychange', refresh);
    };
  }, []);

  const canExport = valid && entries.length > 0 && !exporting && loading !== 'first';
  return (
    <Page
      title="Audit log"
      description="Everything the host did and who decided: requests, approvals, runs, key and allowlist changes."
      actions={
        <>
          <button type="button" onClick={() => void exportSearch('csv')} disabled={!canExport} title={`Every entry of this search, as a spreadsheet. ${EXPORT_NOTE}`}>
            Export CSV
          </button>
          <button type="button" onClick={() => void exportSearch('jsonl')} disabled={!canExport} title={`Every entry of this search, one JSON object per line. ${EXPORT_NOTE}`}>
            Export JSON Lines
          </button>
        </>
      }
    >
      <FilterBar />
      {exporting ? (
        <div className="callout callout-info audit-exporting" role="status">
          <span>
            Exporting as {exporting.format === 'csv' ? 'CSV' : 'JSON Lines'}: {exporting.count.toLocaleString()} entries so far…
          </span>
          <button type="button" onClick={cancelExport}>
            Cancel export
          </button>
        </div>
      ) : null}
      <ResultLine />
      {searched ? <Results /> : null}
    </Page>
  );
}

function ResultLine() {
  const entries = useEntries();
  const hasMore = useHasMore();
  const loading = useLoading();
  const error = useSearchError();
  const valid = useValidQuery();
  let text: string;
  if (!valid) text = 'Fix the time range to search.';
  else if (loading === 'first') text = 'Searching…';
  else if (error) text = '';
  else if (entries.length === 0) text = 'No entries.';
  else if (hasMore) text = `${entries.length.toLocaleString()} newest entries loaded, newest first; more load as you scroll.`;
  else text = `${entries.length.toLocaleString()} ${entries.length === 1 ? 'entry' : 'entries'}, newest first: all loaded.`;
  return (
    <p className="audit-count muted" role="status" aria-live="polite">
      {text}
      {loading === 'more' ? ' Loading more…' : ''}
    </p>
  );
}

function Results() {
  const entries = useEntries();
  const open = useOpenEntry();
  const loading = useLoading();
  const error = useSearchError();
  const filters = useFilters();
  const valid = useValidQuery();
  if (!valid) return null;
  if (error) {
    return (
      <div className="callout callout-bad" role="alert">
        <p>The search failed: {error}</p>
        <button type="button" onClick={() => void search()}>
          Try again
        </button>
      </div>
    );
  }
  if (entries.length === 0 && loading !== 'first') {
    return isFiltered(filters) ? (
      <EmptyState
        title="No entries match"
        action={
          <button type="button" onClick={clearFilters}>
            Clear filters
          </button>
        }
      >
        Try fewer words or a wider time range. Words match the start of words in the message, kind, ids and details.
      </EmptyState>
    ) : (
      <EmptyState title="The audit log is empty">Everything the host does is recorded here: requests, decisions, runs, and changes to keys, the allowlist and settings.</EmptyState>
    );
  }
  return (
    <div className={open ? 'audit-split audit-split-open' : 'audit-split'}>
      <AuditTable entries={entries} compact={open !== null} />
      {open ? <EntryDetail entry={open} /> : null}
    </div>
  );
}

function FilterBar() {
  const filters = useFilters();
  const entries = useEntries();
  const operations = useStatus((s) => s.allowlist.operations);
  const keys = useKeys();

  // The search box: typed text searches after a short pause; a text set elsewhere (the detail's
  // "Search this request") shows up here.
  const [draft, setDraft] = useState(filters.text);
  const [shown, setShown] = useState(filters.text);
  if (filters.text !== shown) {
    setShown(filters.text);
    setDraft(filters.text);
  }
  useEffect(() => {
    if (draft === filters.text) return;
    const timer = setTimeout(() => {
      setShown(draft);
      setFilters({ text: draft });
    }, DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [draft, filters.text]);

  const ops = useMemo(
    () => [...new Set([...(operations ?? []), ...entries.map((e) => e.op).filter((o): o is string => !!o), ...(filters.op ? [filters.op] : [])])].sort(),
    [operations, entries, filters.op],
  );
  const kinds = useMemo(() => [...new Set([...KNOWN_KINDS, ...entries.map((e) => e.kind), ...(filters.kind ? [filters.kind] : [])])].sort(), [entries, filters.kind]);
  const keyList = keys ?? [];
  const rangeProblem = rangeError(filters);

  const setRange = (range: RangePreset) => {
    const patch: Partial<Filters> = { range };
    if (range === 'custom' && !filters.from && !filters.to) {
      // Start from the last day: easier to adjust than two empty fields.
      patch.from = isoToLocalInput(new Date(Date.now() - 86400_000).toISOString());
      patch.to = '';
    }
    setFilters(patch);
  };

  return (
    <div className="audit-filters" role="search" aria-label="Search the audit log">
      <div className="audit-filter-row">
        <SpoolSwitcher />
        <FilterField label="Search" className="audit-filter audit-filter-text">
          <input
            type="search"
            value={draft}
            placeholder="Words, a request id, a key id…"
            maxLength={500}
            onChange={(e) => setDraft(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter') {
                setShown(draft);
                setFilters({ text: draft });
              }
            }}
          />
        </FilterField>
        <FilterField label="Request state">
          <select value={filters.state} onChange={(e) => setFilters({ state: e.target.value as RequestState | '' })}>
            <option value="">Any state</option>
            {STATES.map((s) => (
              <option key={s} value={s}>
                {stateLabel(s)}
              </option>
            ))}
          </select>
        </FilterField>
        <FilterField label="Operation">
          <select value={filters.op} onChange={(e) => setFilters({ op: e.target.value })}>
            <option value="">Any operation</option>
            {ops.map((o) => (
              <option key={o} value={o}>
                {o}
              </option>
            ))}
          </select>
        </FilterField>
        <FilterField label="Key">
          <select value={filters.keyId} onChange={(e) => setFilters({ keyId: e.target.value })}>
            <option value="">Any key</option>
            {keyList.map((k) => (
              <option key={k.key_id} value={k.key_id}>
                {k.name} ({k.key_id}){k.revoked_at ? ', revoked' : ''}
              </option>
            ))}
            {filters.keyId && !keyList.some((k) => k.key_id === filters.keyId) ? <option value={filters.keyId}>{filters.keyId}</option> : null}
          </select>
        </FilterField>
        <FilterField label="Kind">
          <select value={filters.kind} onChange={(e) => setFilters({ kind: e.target.value })}>
            <option value="">Any kind</option>
            {kinds.map((k) => (
              <option key={k} value={k} title={kindAbout(k) ?? undefined}>
                {kindLabel(k)}
              </option>
            ))}
          </select>
        </FilterField>
        <FilterField label="Time">
          <select value={filters.range} onChange={(e) => setRange(e.target.value as RangePreset)}>
            {RANGES.map((r) => (
              <option key={r.value} value={r.value}>
                {r.label}
              </option>
            ))}
          </select>
        </FilterField>
      </div>
      {filters.range === 'custom' ? (
        <div className="audit-filter-row audit-range-row">
          <FilterField label="From" error={rangeProblem?.field === 'from' ? rangeProblem.message : null}>
            <input type="datetime-local" value={filters.from} onChange={(e) => setFilters({ from: e.target.value })} />
          </FilterField>
          <FilterField label="To" hint={rangeProblem ? undefined : 'Leave either side empty for no limit.'} error={rangeProblem?.field === 'to' ? rangeProblem.message : null}>
            <input type="datetime-local" value={filters.to} onChange={(e) => setFilters({ to: e.target.value })} />
          </FilterField>
        </div>
      ) : null}
      {isFiltered(filters) ? (
        <button
          type="button"
          className="link audit-clear"
          onClick={() => {
            setShown('');
            setDraft('');
            clearFilters();
          }}
        >
          Clear filters
        </button>
      ) : null}
    </div>
  );
}

/** A filter: the shared labelled field, laid out for the filter bar. */
function FilterField({ className = 'audit-filter', children, ...field }: { label: string; hint?: string; error?: string | null; className?: string; children: ReactElement<Record<string, unknown>> }) {
  return (
    <div className={className}>
      <Field {...field}>{children}</Field>
    </div>
  );
}
