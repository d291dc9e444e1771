// What the host is doing: runs that need a human (uncertain ones, with their last reconcile check,
// approvals), runs in progress with their live output (orphaned ones, which outlived a host restart,
// marked and killable), the queue, and recent results; filtered by spool, key and operation. Follows the
// host's state live. A request opens its detail.
import { useEffect, useState, type ReactNode } from 'react';
import type { RequestSummaryView } from '../../../shared/ipc/views';
import type { RequestState } from '../../../shared/protocol/types';
import { api } from '../../api';
import { EmptyState } from '../../components/EmptyState';
import { Page } from '../../components/Page';
import { AttemptView, CheckAgain } from '../../components/ReconcileCheck';
import { cancelRequest } from '../../lib/cancelRequest';
import { useLoad } from '../../lib/useLoad';
import { useKeys } from '../../stores/keys';
import { navigate } from '../../stores/route';
import { useHostVersion, useStatus } from '../../stores/status';
import { setHostPaused } from '../../lib/hostPause';
import { SpoolSwitcher } from '../../components/SpoolSwitcher';
import { useChosenSpool } from '../../stores/spool';
import { RequestTable } from './RequestTable';
import { RunningCard } from './RunningCard';
import './activity.css';

const ACTIVE: RequestState[] = ['uncertain', 'awaiting_approval', 'running', 'queued'];
const FINISHED: RequestState[] = ['succeeded', 'failed', 'rejected', 'denied', 'expired', 'cancelled'];
const PAGE = 25;

export function ActivityScreen() {
  // Any change in the host's state reloads the lists (keeping them on screen until the answer).
  const version = useHostVersion();
  const paused = useStatus((s) => s.paused);
  const daemonUp = useStatus((s) => s.daemon.running);
  const allowlistOps = useStatus((s) => s.allowlist.operations.join('\n'));
  // The host's word on runs the lists do not carry: orphaned ones, and uncertain ones' reconcile checks.
  const orphans = useStatus((s) => s.running.filter((r) => r.orphaned).map((r) => r.id).join('\n'));
  const uncertainInfo = useStatus((s) => s.uncertain);
  const [keyId, setKeyId] = useState('');
  const [op, setOp] = useState('');
  const [limit, setLimit] = useState(PAGE);
  // Every request being cancelled (asked, then told to the host), each button on its own.
  const [cancelling, setCancelling] = useState<ReadonlySet<string>>(() => new Set());
  const spool = useChosenSpool();
  const filter = { ...(keyId ? { keyId } : {}), ...(op ? { op } : {}), ...(spool ? { spool } : {}) };

  // The filters say what is listed (a change shows "Loading…"); more results and the host's changes
  // reload the same lists.
  const active = useLoad(() => api.requests.list({ states: ACTIVE, limit: 1000, ...filter }), [keyId, op, spool], version);
  const recent = useLoad(() => api.requests.list({ states: FINISHED, limit, ...filter }), [keyId, op, spool], `${version}/${limit}`);
  // "Show older results" asked: the button says so until the longer list is there.
  const [loadingMore, setLoadingMore] = useState(false);
  useEffect(() => {
    if (!recent.loading) setLoadingMore(false);
  }, [recent.loading]);
  const keys = useKeys();
  const keyName = (id: string) => keys?.find((k) => k.key_id === id)?.name;

  const rows = active.data ?? [];
  // Oldest first: the order they run in.
  const inState = (s: RequestState) => rows.filter((r) => r.state === s).reverse();
  const uncertain = inState('uncertain');
  const awaiting = inState('awaiting_approval');
  const running = inState('running');
  const queued = inState('queued');
  const finished = recent.data ?? [];
  const filtered = keyId !== '' || op !== '' || spool !== null;
  const loading = active.data === undefined || recent.data === undefined;
  const nothingAtAll = !loading && !filtered && rows.length === 0 && finished.length === 0;

  const ops = [...new Set([...(allowlistOps ? allowlistOps.split('\n') : []), ...(op ? [op] : [])])].sort();

  const orphaned = new Set(orphans ? orphans.split('\n') : []);
  const checkOf = (id: string) => uncertainInfo?.find((u) => u.id === id);

  const cancel = async (r: RequestSummaryView) => {
    if (cancelling.has(r.id)) return;
    setCancelling((s) => new Set(s).add(r.id));
    try {
      if (await cancelRequest({ ...r, orphaned: orphaned.has(r.id) })) active.reload();
    } finally {
      setCancelling((s) => {
        const left = new Set(s);
        left.delete(r.id);
        return left;
      });
    }
  };

  const cancelButton = (r: RequestSummaryView) => (
    <button type="button" className="danger" disabled={cancelling.has(r.id)} onClick={() => void cancel(r)} aria-label={`Cancel ${r.id}`}>
      {cancelling.has(r.id) ? 'Cancelling…' : 'Cancel'}
    </button>
  );

  return (
    <Page title="Activity" description="What the sandbox asked for and what became of it, as it happens. Open a request for its arguments, output and decision trail.">
      {paused ? (
        <div className="callout callout-warn act-banner">
          <div>
            <strong>The host is paused.</strong> Nothing new starts: requests wait in the queue until you resume. Runs that have already started finish normally.
          </div>
          <button type="button" className="primary" onClick={() => void setHostPaused(false)}>
            Resume
          </button>
        </div>
      ) : null}
      {daemonUp === false ? (
        <div className="callout callout-bad act-banner">
          <div>
            <strong>The host is not running.</strong> Requests stay in the spool until it starts again; nothing is lost.
          </div>
        </div>
      ) : null}

      <div className="act-filters" role="group" aria-label="Filter requests">
        <SpoolSwitcher />
        <div className="act-filter">
          <label htmlFor="act-filter-key">Key</label>
          <select id="act-filter-key" value={keyId} onChange={(e) => (setKeyId(e.target.value), setLimit(PAGE))}>
            <option value="">All keys</option>
            {(keys ?? []).filter((k) => !spool || k.spool === spool).map((k) => (
              <option key={k.key_id} value={k.key_id}>
                {k.name} ({k.key_id}){k.revoked_at ? ' — revoked' : ''}
              </option>
            ))}
          </select>
        </div>
        <div className="act-filter">
          <label htmlFor="act-filter-op">Operation</label>
          <select id="act-filter-op" value={op} onChange={(e) => (setOp(e.target.value), setLimit(PAGE))}>
            <option value="">All operations</option>
            {ops.map((o) => (
              <option key={o} value={o}>
                {o}
              </option>
            ))}
          </select>
        </div>
        {keyId !== '' || op !== '' ? (
          <button type="button" className="link" onClick={() => (setKeyId(''), setOp(''), setLimit(PAGE))}>
            Clear filters
          </button>
        ) : null}
        {active.error || recent.error ? <span className="error-text">{active.error ?? recent.error}</span> : null}
      </div>

      {loading ? (
        <p className="muted">Loading…</p>
      ) : nothingAtAll ? (
        <EmptyState
          title="No requests yet"
          action={
            <button type="button" onClick={() => navigate('keys')}>
              Give the sandbox a key
            </button>
          }
        >
          Requests from the sandbox appear here as they arrive: queued, in progress, waiting for you, then their results. The agent needs a key and an
          operation from the allowlist.
        </EmptyState>
      ) : (
        <>
          {uncertain.length > 0 ? (
            <Section title="Uncertain: check and resolve" count={uncertain.length} tone="warn">
              <p className="act-note">
                The host stopped while these ran, so nobody knows whether they took effect. They are never re-run. Where the operation can look its
                effect up, the host did and could not tell: check again, or check yourself and record what you found.
              </p>
              <RequestTable
                rows={uncertain}
                label="Uncertain runs"
                keyName={keyName}
                when={{ title: 'Started', of: (r) => r.started_at }}
                showError
                detail={(r) => {
                  const attempt = checkOf(r.id)?.reconcile;
                  return attempt ? <AttemptView attempt={attempt} /> : null;
                }}
                action={(r) => (
                  <div className="act-buttons">
                    {checkOf(r.id)?.reconcilable ? <CheckAgain id={r.id} onDone={active.reload} /> : null}
                    <button type="button" className="primary" onClick={() => navigate('requests', r.id)} aria-label={`Resolve ${r.id}`}>
                      Resolve…
                    </button>
                  </div>
                )}
              />
            </Section>
          ) : null}

          <Section title="Awaiting approval" count={awaiting.length} tone="warn">
            {awaiting.length === 0 ? (
              <Empty>Nothing is waiting for your decision. Operations marked “approval: always” stop here until you approve or deny them.</Empty>
            ) : (
              <RequestTable
                rows={awaiting}
                label="Awaiting approval"
                keyName={keyName}
                when={{ title: 'Asked', of: (r) => r.updated_at }}
                action={(r) => (
                  <button type="button" className="primary" onClick={() => navigate('approvals', r.id)} aria-label={`Decide on ${r.id}`}>
                    Decide…
                  </button>
                )}
              />
            )}
          </Section>

          <Section title="Running" count={running.length} tone="info">
            {running.length === 0 ? (
              <Empty>No run in progress. Runs show here with their output as it is written.</Empty>
            ) : (
              <ul className="run-list" aria-label="Runs in progress">
                {running.map((r) => (
                  <RunningCard
                    key={r.id}
                    run={r}
                    orphaned={orphaned.has(r.id)}
                    keyName={keyName(r.key_id)}
                    onCancel={() => void cancel(r)}
                    cancelling={cancelling.has(r.id)}
                  />
                ))}
              </ul>
            )}
          </Section>

          <Section title="Queued" count={queued.length} tone="neutral">
            {queued.length === 0 ? (
              <Empty>
                {paused ? 'The queue is empty. New requests will wait here while the host is paused.' : 'The queue is empty: new requests start as soon as a slot is free.'}
              </Empty>
            ) : (
              <RequestTable rows={queued} label="Queued requests" keyName={keyName} when={{ title: 'Arrived', of: (r) => r.claimed_at }} action={cancelButton} />
            )}
          </Section>

          <Section title="Recent results" count={null} tone="neutral">
            {finished.length === 0 ? (
              <Empty>{filtered ? 'No finished request matches these filters.' : 'No request has finished yet. Results show here with their state and how long they took.'}</Empty>
            ) : (
              <>
                <RequestTable rows={finished} label="Recent results" keyName={keyName} when={{ title: 'Finished', of: (r) => r.finished_at ?? r.updated_at }} showError />
                {(finished.length >= limit || loadingMore) && limit < 1000 ? (
                  <div className="act-more">
                    <button type="button" onClick={() => (setLimit((l) => Math.min(1000, l + PAGE * 2)), setLoadingMore(true))} disabled={loadingMore}>
                      {loadingMore ? 'Loading…' : 'Show older results'}
                    </button>
                  </div>
                ) : null}
              </>
            )}
          </Section>
        </>
      )}
    </Page>
  );
}

function Section({ title, count, tone, children }: { title: string; count: number | null; tone: string; children: ReactNode }) {
  const id = `act-${title.replace(/\W+/g, '-').toLowerCase()}`;
  return (
    <section className="act-section" aria-labelledby={id}>
      <h2 id={id}>
        {title}
        {count !== null && count > 0 ? <span className={`badge badge-${tone}`}>{count}</span> : null}
      </h2>
      {children}
    </section>
  );
}

function Empty({ children }: { children: ReactNode }) {
  return <p className="act-empty muted">{children}</p>;
}
