// The audit entries as a virtualised table: every row has the same height, only the rows in view (and a
// few around them) are in the DOM, and spacer rows stand in for the rest, so 100,000 entries scroll as
// lightly as 100. Scrolling near the end of what is loaded loads the next page.
// Keyboard: the table is one tab stop; arrows, Page Up/Down, Home/End move the selection, Enter opens it,
// Escape closes the detail.
import { useSeveralSpools } from '../../stores/spool';
import { useCallback, useEffect, useLayoutEffect, useRef, useState, type KeyboardEvent } from 'react';
import type { AuditView } from '../../../shared/ipc/views';
import { Time } from '../../components/Time';
import { formatTime } from '../../lib/format';
import { visible } from '../../../shared/text/visible';
import { kindAbout, kindLabel, kindTone } from './query';
import { loadMore, openEntry, rememberScroll, savedScrollTop, selectEntry, useHasMore, useLoading, useMoreError, useSearchCount, useSelectedSeq } from './store';

const ROW_H = 34;
/** The grid's id: closing the detail panel puts the focus back on it. */
export const GRID_ID = 'audit-grid';
const HEAD_H = 34;
const OVERSCAN = 12;

function tone(e: AuditView): string {
  if (e.kind === 'finished' && e.details) return e.details.state === 'succeeded' ? 'good' : 'bad';
  return kindTone(e.kind);
}

export function AuditTable({ entries, compact }: { entries: AuditView[]; compact: boolean }) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const tableRef = useRef<HTMLTableElement>(null);
  const [height, setHeight] = useState(600);
  const selectedSeq = useSelectedSeq();
  const hasMore = useHasMore();
  const loading = useLoading();
  const moreError = useMoreError();
  const searchCount = useSearchCount();
  // Where the list is scrolled, for the search it was scrolled in: a new search is at the top from its
  // first render on (not only once the browser reports the scroll), so nothing is drawn or loaded for
  // the old position.
  const [view, setView] = useState(() => ({ top: savedScrollTop(), search: searchCount }));
  const scrollTop = view.search === searchCount ? view.top : 0;

  // Come back where the list was; follow the container's size.
  useLayoutEffect(() => {
    const el = scrollRef.current;
    if (!el) return;
    el.scrollTop = savedScrollTop();
    setHeight(el.clientHeight);
    const ro = new ResizeObserver(() => setHeight(el.clientHeight));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  // A new search starts at the top; new entries put on top keep the rows in view where they are.
  const seen = useRef({ first: entries[0]?.seq, search: searchCount });
  useLayoutEffect(() => {
    const el = scrollRef.current;
    const before = seen.current;
    seen.current = { first: entries[0]?.seq, search: searchCount };
    if (!el) return;
    if (before.search !== searchCount) {
      el.scrollTop = 0;
      return;
    }
    if (before.first === undefined || before.first === entries[0]?.seq) return;
    const shifted = entries.findIndex((e) => e.seq === before.first);
    if (shifted > 0 && el.scrollTop > 0) el.scrollTop += shifted * ROW_H;
  }, [entries, searchCount]);

  const onScroll = useCallback(() => {
    const el = scrollRef.current;
    if (!el) return;
    setView({ top: el.scrollTop, search: searchCount });
    rememberScroll(el.scrollTop);
  }, [searchCount]);

  const start = Math.max(0, Math.floor(scrollTop / ROW_H) - OVERSCAN);
  const end = Math.min(entries.length, Math.ceil((scrollTop + height) / ROW_H) + OVERSCAN);
  const rows = entries.slice(start, end);

  // Near the end of what is loaded: load the next page (not again after a failure: "Load more" retries).
  useEffect(() => {
    if (hasMore && !loading && !moreError && entries.length > 0 && end >= entries.length - OVERSCAN / 2) void loadMore();
  }, [end, entries.length, hasMore, loading, moreError]);

  const selectedIndex = selectedSeq === null ? -1 : entries.findIndex((e) => e.seq === selectedSeq);

  const reveal = (i: number) => {
    const el = scrollRef.current;
    if (!el) return;
    const top = i * ROW_H;
    if (top < el.scrollTop) el.scrollTop = top;
    else if (HEAD_H + top + ROW_H > el.scrollTop + el.clientHeight) el.scrollTop = HEAD_H + top + ROW_H - el.clientHeight;
  };

  const onKeyDown = (e: KeyboardEvent<HTMLTableElement>) => {
    if (entries.length === 0) return;
    const page = Math.max(1, Math.floor((height - HEAD_H) / ROW_H) - 1);
    const cur = selectedIndex;
    let next: number | null = null;
    switch (e.key) {
      case 'ArrowDown':
        next = cur < 0 ? 0 : Math.min(entries.length - 1, cur + 1);
        break;
      case 'ArrowUp':
        next = cur < 0 ? 0 : Math.max(0, cur - 1);
        break;
      case 'PageDown':
        next = Math.min(entries.length - 1, Math.max(cur, 0) + page);
        break;
      case 'PageUp':
        next = Math.max(0, cur - page);
        break;
      case 'Home':
        next = 0;
        break;
      case 'End':
        next = entries.length - 1;
        break;
      case 'Enter':
      case ' ': {
        const entry = entries[cur < 0 ? 0 : cur];
        if (entry) openEntry(entry);
        e.preventDefault();
        return;
      }
      case 'Escape':
        openEntry(null);
        return;
      default:
        return;
    }
    e.preventDefault();
    const entry = entries[next];
    if (!entry) return;
    selectEntry(entry.seq);
    reveal(next);
  };

  const activeId = selectedIndex >= start && selectedIndex < end ? `audit-row-${entries[selectedIndex]!.seq}` : undefined;
  const several = useSeveralSpools();
  const spoolColumn = several && !compact;
  const cols = compact ? 3 : spoolColumn ? 8 : 7;

  return (
    <div className="audit-scroll" ref={scrollRef} onScroll={onScroll}>
      <table
        ref={tableRef}
        id={GRID_ID}
        className={`list audit-table${compact ? ' compact' : ''}`}
        role="grid"
        aria-label="Audit entries"
        aria-rowcount={hasMore ? -1 : entries.length + 1}
        aria-activedescendant={activeId}
        tabIndex={0}
        onKeyDown={onKeyDown}
      >
        <colgroup>
          <col className="c-time" />
          <col className="c-kind" />
          {compact ? null : (
            <>
              <col className="c-actor" />
              <col className="c-op" />
              <col className="c-key" />
              {spoolColumn ? <col className="c-spool" /> : null}
              <col className="c-req" />
            </>
          )}
          <col className="c-msg" />
        </colgroup>
        <thead>
          <tr aria-rowindex={1}>
            <th scope="col">Time</th>
            <th scope="col">Kind</th>
            {compact ? null : (
              <>
                <th scope="col">Actor</th>
                <th scope="col">Operation</th>
                <th scope="col">Key</th>
                {spoolColumn ? <th scope="col">Spool</th> : null}
                <th scope="col">Request</th>
              </>
            )}
            <th scope="col">Message</th>
          </tr>
        </thead>
        <tbody>
          {start > 0 ? (
            <tr className="audit-spacer" aria-hidden="true">
              <td colSpan={cols} style={{ height: start * ROW_H }} />
            </tr>
          ) : null}
          {rows.map((e, i) => (
            <tr
              key={e.seq}
              id={`audit-row-${e.seq}`}
              className="clickable"
              aria-rowindex={start + i + 2}
              aria-selected={e.seq === selectedSeq}
              onClick={() => {
                openEntry(e);
                tableRef.current?.focus({ preventScroll: true });
              }}
            >
              <td>
                <EntryTime iso={e.at} />
              </td>
              <td>
                <span className={`badge badge-${tone(e)}`} title={kindAbout(e.kind) ?? kindLabel(e.kind)}>
                  {kindLabel(e.kind)}
                </span>
              </td>
              {compact ? null : (
                <>
                  <td title={e.actor}>{e.actor}</td>
                  <td>{e.op ? <code>{e.op}</code> : <span className="muted">—</span>}</td>
                  <td title={e.key_id ?? undefined}>{e.key_id ? <Id id={e.key_id} /> : <span className="muted">—</span>}</td>
                  {spoolColumn ? <td title={e.spool ?? undefined}>{e.spool ?? <span className="muted">—</span>}</td> : null}
                  <td title={e.request_id ?? undefined}>{e.request_id ? <Id id={e.request_id} /> : <span className="muted">—</span>}</td>
                </>
              )}
              <td title={visible(e.message)}>{visible(e.message)}</td>
            </tr>
          ))}
          {end < entries.length ? (
            <tr className="audit-spacer" aria-hidden="true">
              <td colSpan={cols} style={{ height: (entries.length - end) * ROW_H }} />
            </tr>
          ) : null}
        </tbody>
      </table>
      {hasMore ? (
        <div className="audit-more">
          {moreError ? (
            <p className="error-text" role="alert">
              Could not load more entries: {moreError}
            </p>
          ) : null}
          <button type="button" onClick={() => void loadMore()} disabled={loading !== null}>
            {loading === 'more' ? 'Loading…' : moreError ? 'Try again' : 'Load more'}
          </button>
        </div>
      ) : entries.length > 0 ? (
        <p className="audit-more muted">End of the log for this search.</p>
      ) : null}
    </div>
  );
}

/** An id in a column sized for this host's ids: a longer one (the sandbox names its requests) is cut
 *  in the middle, keeping its end, which tells ids with the same start apart; the cell's title and the
 *  detail panel have it whole. */
function Id({ id }: { id: string }) {
  const TAIL = 6;
  if (id.length <= TAIL * 2) return <code>{id}</code>;
  return (
    <code className="audit-id">
      <span className="audit-id-head">{id.slice(0, -TAIL)}</span>
      <span>{id.slice(-TAIL)}</span>
    </code>
  );
}

/** Near now "5 min ago"; older, the date and time (an old entry's "2524 days ago" says little). The exact time on hover. */
function EntryTime({ iso }: { iso: string }) {
  const t = Date.parse(iso);
  if (Number.isNaN(t) || Math.abs(Date.now() - t) < 86400_000) return <Time iso={iso} />;
  return (
    <time dateTime={iso} title={formatTime(iso)}>
      {new Date(t).toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'short' })}
    </time>
  );
}
