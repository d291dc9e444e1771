// The audit log: everything the host did, searchable (words match as prefixes) and filterable by
// request state, operation, key, kind and time; a detail panel per entry; export of the whole search.
import { cloneElement, useEffect, useId, useState, type ReactElement } from 'react';
import { STATES, type RequestState } from '../../../shared/protocol/types';
import { EmptyState } from '../../components/EmptyState';
import { Page } from '../../components/Page';
import { stateLabel } from '../../components/StateBadge';
import { useHostVersion, useStatus } from '../../stores/status';
import { useKeys } from '../../stores/keys';
import { AuditTable } from './AuditTable';
import { EntryDetail } from './EntryDetail';
import { isFiltered, isoToLocalInput, KNOWN_KINDS, kindLabel, RANGES, rangeError, type Filters, type RangePreset } from './query';
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
  useEffect(() => {
    const timer = setInterval(() => void refreshNewest(), 5000);
    return () => clearInterval(timer);
  }, []);

  const canExport = valid && entries.length > 0 && !exporting && loading !== 'first';
  return (
    <Page
      title="Audit log"
      description="Everything the host did and who decided: requests, approvals, runs, key and allowlist changes."
      actions={
        <>
          <button type="button" onClick={() => void exportSearch('csv')} disabled={!canExport} title="Every entry of this search, as a spreadsheet">
            Export CSV
          </button>
          <button type="button" onClick={() => void exportSearch('jsonl')} disabled={!canExport} title="Every entry of this search, one JSON object per line">
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

  const ops = [...new Set([...(operations ?? []), ...entries.map((e) => e.op).filter((o): o is string => !!o), ...(filters.op ? [filters.op] : [])])].sort();
  const kinds = [...new Set([...KNOWN_KINDS, ...entries.map((e) => e.kind), ...(filters.kind ? [filters.kind] : [])])].sort();
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
              <option key={k} value={k}>
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
        <div className="audit-filter-row">
          <FilterField label="From">
            <input type="datetime-local" value={filters.from} aria-invalid={rangeProblem ? true : undefined} aria-describedby={rangeProblem ? 'audit-range-error' : undefined} onChange={(e) => setFilters({ from: e.target.value })} />
          </FilterField>
          <FilterField label="To">
            <input type="datetime-local" value={filters.to} aria-invalid={rangeProblem ? true : undefined} aria-describedby={rangeProblem ? 'audit-range-error' : undefined} onChange={(e) => setFilters({ to: e.target.value })} />
          </FilterField>
          {rangeProblem ? (
            <span id="audit-range-error" className="error-text audit-range-error" role="alert">
              {rangeProblem}
            </span>
          ) : (
            <span className="muted audit-range-hint">Leave either side empty for no limit.</span>
          )}
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

/** A filter's label above its control, tied together by id. */
function FilterField({ label, className = 'audit-filter', children }: { label: string; className?: string; children: ReactElement<Record<string, unknown>> }) {
  const id = useId();
  return (
    <div className={className}>
      <label htmlFor={id}>{label}</label>
      {cloneElement(children, { id })}
    </div>
  );
}
