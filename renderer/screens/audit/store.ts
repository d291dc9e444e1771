// The audit screen's state: the filters, the entries loaded so far (newest first, paged backwards by
// seq), the selection and the entry open in the detail panel, and an export in progress. Kept in a
// store so that it all survives switching screens.
import { create } from 'zustand';
import type { AuditView } from '../../../shared/ipc/views';
import { api, errorText } from '../../api';
import { saveAs } from '../../lib/download';
import { toast } from '../../stores/toasts';
import { chosenSpoolNow, onSpoolChosen } from '../../stores/spool';
import { exportFile, exportFileName, type ExportFormat } from './exportFormat';
import { inRange, moveOn, NO_FILTERS, toQuery, type AuditQuery, type Filters } from './query';

const PAGE_SIZE = 200;
const EXPORT_PAGE = 1000;

interface AuditState {
  filters: Filters;
  /** The search the loaded entries belong to (null while the filters are invalid). */
  query: AuditQuery | null;
  entries: AuditView[];
  hasMore: boolean;
  /** 'first': a new search is loading; 'more': the next page is. */
  loading: 'first' | 'more' | null;
  error: string | null;
  /** Why the last next page failed: paging as you scroll waits for "Load more" or a new search. */
  moreError: string | null;
  /** Counts the searches that loaded: the list starts at the top on each. */
  searchCount: number;
  /** Whether a search has run since the screen was first shown. */
  searched: boolean;
  selectedSeq: number | null;
  open: AuditView | null;
  exporting: { format: ExportFormat; count: number } | null;
  scrollTop: number;
}

const useAuditStore = create<AuditState>(() => ({
  filters: NO_FILTERS,
  query: {},
  entries: [],
  hasMore: false,
  loading: null,
  error: null,
  moreError: null,
  searchCount: 0,
  searched: false,
  selectedSeq: null,
  open: null,
  exporting: null,
  scrollTop: 0,
}));

// A newer search makes older answers stale: each call remembers which search it belongs to.
let generation = 0;

export async function search(): Promise<void> {
  const gen = ++generation;
  const query = toQuery(useAuditStore.getState().filters, Date.now(), chosenSpoolNow());
  if (!query) {
    useAuditStore.setState({ query: null, entries: [], hasMore: false, error: null, moreError: null, loading: null, searched: true, open: null });
    return;
  }
  useAuditStore.setState({ query, loading: 'first', error: null, moreError: null, searched: true });
  try {
    const page = await api.audit.search({ ...query, limit: PAGE_SIZE });
    if (gen !== generation) return;
    useAuditStore.setState((s) => ({
      entries: page,
      hasMore: page.length === PAGE_SIZE,
      loading: null,
      scrollTop: 0,
      searchCount: s.searchCount + 1,
      selectedSeq: page.some((e) => e.seq === s.selectedSeq) ? s.selectedSeq : (page[0]?.seq ?? null),
    }));
  } catch (e) {
    if (gen !== generation) return;
    useAuditStore.setState({ entries: [], hasMore: false, loading: null, error: errorText(e) });
  }
}

/** Brings a relative time range ("Last hour") up to the clock: the entries that fell out of it go
 *  (from the bottom: the rows in view stay), and so does the rest of the log below them. */
function moveRangeOn(): void {
  const s = useAuditStore.getState();
  const next = s.query && moveOn(s.query, toQuery(s.filters, Date.now(), chosenSpoolNow()));
  if (!next) return;
  const kept = inRange(s.entries, next);
  useAuditStore.setState({ query: next, entries: kept, hasMore: kept.length < s.entries.length ? false : s.hasMore });
}

/** The next (older) page of the current search. */
export async function loadMore(): Promise<void> {
  moveRangeOn();
  const s = useAuditStore.getState();
  const last = s.entries.at(-1);
  if (!s.query || !s.hasMore || s.loading || !last) return;
  const gen = generation;
  useAuditStore.setState({ loading: 'more', moreError: null });
  try {
    const page = await api.audit.search({ ...s.query, limit: PAGE_SIZE, before: last.seq });
    if (gen !== generation) return;
    useAuditStore.setState((st) => ({ entries: [...st.entries, ...page], hasMore: page.length === PAGE_SIZE, loading: null }));
  } catch (e) {
    if (gen !== generation) return;
    useAuditStore.setState({ loading: null, moreError: errorText(e) });
  }
}

/** Puts entries newer than the loaded ones on top (the list follows the log as it grows). */
export async function refreshNewest(): Promise<void> {
  if (!useAuditStore.getState().query || useAuditStore.getState().loading) return;
  moveRangeOn();
  const { query } = useAuditStore.getState();
  if (!query) return;
  const gen = generation;
  try {
    const page = await api.audit.search({ ...query, limit: PAGE_SIZE });
    if (gen !== generation) return;
    const top = useAuditStore.getState().entries[0]?.seq ?? 0;
    const newer = page.filter((e) => e.seq > top);
    if (newer.length === 0) return;
    if (newer.length === page.length && top !== 0) {
      // More arrived than a page holds: start over from the newest rather than leave a gap.
      void search();
      return;
    }
    useAuditStore.setState((st) => ({ entries: [...newer, ...st.entries] }));
  } catch {
    /* the next change tries again; errors show on the next search */
  }
}

// The spool switcher is one more filter: another spool is another search.
onSpoolChosen(() => {
  if (useAuditStore.getState().searched) void search();
});

export function setFilters(patch: Partial<Filters>): void {
  useAuditStore.setState((s) => ({ filters: { ...s.filters, ...patch } }));
  void search();
}

export function clearFilters(): void {
  useAuditStore.setState({ filters: NO_FILTERS });
  void search();
}

export function selectEntry(seq: number | null): void {
  useAuditStore.setState({ selectedSeq: seq });
}

export function openEntry(entry: AuditView | null): void {
  useAuditStore.setState(entry ? { open: entry, selectedSeq: entry.seq } : { open: null });
}

export function rememberScroll(scrollTop: number): void {
  useAuditStore.setState({ scrollTop });
}

// Each export has a token; cancelling moves the token on, and the running export notices and stops.
let exportToken = 0;

/** Saves every entry of the current search (not only the loaded ones), paging through all of them. */
export async function exportSearch(format: ExportFormat): Promise<void> {
  const { filters, exporting } = useAuditStore.getState();
  // Made from the filters now: "Last hour" means the hour before the export, however long the screen was open.
  const query = toQuery(filters, Date.now(), chosenSpoolNow());
  if (!query || exporting) return;
  const token = ++exportToken;
  useAuditStore.setState({ exporting: { format, count: 0 } });
  const all: AuditView[] = [];
  try {
    for (;;) {
      const before = all.at(-1)?.seq;
      const page = await api.audit.search({ ...query, limit: EXPORT_PAGE, ...(before !== undefined ? { before } : {}) });
      if (token !== exportToken) return;
      all.push(...page);
      useAuditStore.setState({ exporting: { format, count: all.length } });
      if (page.length < EXPORT_PAGE) break;
    }
    const { text, mime } = exportFile(format, all);
    saveAs(text, exportFileName(format), mime);
    toast(`Exported ${all.length.toLocaleString()} ${all.length === 1 ? 'entry' : 'entries'} as ${format === 'csv' ? 'CSV' : 'JSON Lines'}`);
  } catch (e) {
    if (token === exportToken) toast(`Could not export: ${errorText(e)}`, 'error');
  } finally {
    if (token === exportToken) useAuditStore.setState({ exporting: null });
  }
}

export function cancelExport(): void {
  if (!useAuditStore.getState().exporting) return;
  exportToken++;
  useAuditStore.setState({ exporting: null });
  toast('Export cancelled');
}

export const useFilters = (): Filters => useAuditStore((s) => s.filters);
export const useEntries = (): AuditView[] => useAuditStore((s) => s.entries);
export const useHasMore = (): boolean => useAuditStore((s) => s.hasMore);
export const useLoading = (): AuditState['loading'] => useAuditStore((s) => s.loading);
export const useSearchError = (): string | null => useAuditStore((s) => s.error);
export const useMoreError = (): string | null => useAuditStore((s) => s.moreError);
export const useSearchCount = (): number => useAuditStore((s) => s.searchCount);
export const useSearched = (): boolean => useAuditStore((s) => s.searched);
export const useSelectedSeq = (): number | null => useAuditStore((s) => s.selectedSeq);
export const useOpenEntry = (): AuditView | null => useAuditStore((s) => s.open);
export const useExporting = (): AuditState['exporting'] => useAuditStore((s) => s.exporting);
export const useValidQuery = (): boolean => useAuditStore((s) => s.query !== null);
export const searchedOnce = (): boolean => useAuditStore.getState().searched;
export const savedScrollTop = (): number => useAuditStore.getState().scrollTop;
