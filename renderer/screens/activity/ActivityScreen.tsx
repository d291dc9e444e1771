// What the host is doing: runs that need a human (uncertain ones, approvals), runs in progress with
// their live output, the queue, and recent results; filtered by key and operation. Follows the host's
// state live. A request opens its detail.
import { useState, type ReactNode } from 'react';
import type { RequestSummaryView } from '../../../shared/ipc/views';
import type { RequestState } from '../../../shared/protocol/types';
import { api, errorText } from '../../api';
import { EmptyState } from '../../components/EmptyState';
import { Page } from '../../components/Page';
import { useLoad } from '../../lib/useLoad';
import { confirmAction } from '../../stores/confirm';
import { navigate } from '../../stores/route';
import { useStatus } from '../../stores/status';
import { toast } from '../../stores/toasts';
import { RequestTable } from './RequestTable';
import { RunningCard } from './RunningCard';
import './activity.css';

const ACTIVE: RequestState[] = ['uncertain', 'awaiting_approval', 'running', 'queued'];
const FINISHED: RequestState[] = ['succeeded', 'failed', 'rejected', 'denied', 'expired', 'cancelled'];
const PAGE = 25;

export function ActivityScreen() {
  // Any change in the host's state (counts by state, what runs, what waits) reloads the lists.
  const version = useStatus((s) => JSON.stringify([s.requests, s.running.map((r) => r.id), s.approvals.map((a) => a.id), s.uncertain.map((u) => u.id)]));
  const paused = useStatus((s) => s.paused);
  const daemonUp = useStatus((s) => s.daemon.running);
  const allowlistOps = useStatus((s) => s.allowlist.operations.join('\n'));
  const [keyId, setKeyId] = useState('');
  const [op, setOp] = useState('');
  const [limit, setLimit] = useState(PAGE);
  const [cancelling, setCancelling] = useState<string | null>(null);
  const filter = { ...(keyId ? { keyId } : {}), ...(op ? { op } : {}) };

  const active = useLoad(() => api.requests.list({ states: ACTIVE, limit: 1000, ...filter }), [version, keyId, op]);
  const recent = useLoad(() => api.requests.list({ states: FINISHED, limit, ...filter }), [version, keyId, op, limit]);
  const keys = useLoad(() => api.keys.list(), [version]);
  const keyName = (id: string) => keys.data?.find((k) => k.key_id === id)?.name;

  const rows = active.data ?? [];
  // Oldest first: the order they run in.
  const inState = (s: RequestState) => rows.filter((r) => r.state === s).reverse();
  const uncertain = inState('uncertain');
  const awaiting = inState('awaiting_approval');
  const running = inState('running');
  const queued = inState('queued');
  const finished = recent.data ?? [];
  const filtered = keyId !== '' || op !== '';
  const loading = active.data === undefined || recent.data === undefined;
  const nothingAtAll = !loading && !filtered && rows.length === 0 && finished.length === 0;

  const ops = [...new Set([...(allowlistOps ? allowlistOps.split('\n') : []), ...(op ? [op] : [])])].sort();

  const cancel = async (r: RequestSummaryView) => {
    if (r.state === 'running') {
      const ok = await confirmAction({
        title: `Stop ${r.op}?`,
        body: `The run of ${r.id} is stopped now (its process is terminated, then killed). What it already did is not undone.`,
        confirmLabel: 'Stop the run',
        danger: true,
      });
      if (!ok) return;
    }
    setCancelling(r.id);
    try {
      const out = await api.requests.cancel({ id: r.id });
      toast(out.message);
      active.reload();
    } catch (e) {
      toast(errorText(e), 'error');
    } finally {
      setCancelling(null);
    }
  };

  const cancelButton = (r: RequestSummaryView) => (
    <button type="button" className="danger" disabled={cancelling === r.id} onClick={() => void cancel(r)} aria-label={`Cancel ${r.id}`}>
      {cancelling === r.id ? 'Cancelling…' : 'Cancel'}
    </button>
  );

  const resume = async () => {
    try {
      await api.host.setPaused({ paused: false });
      toast('Host resumed');
    } catch (e) {
      toast(errorText(e), 'error');
    }
  };

  return (
    <Page title="Activity" description="What the sandbox asked for and what became of it, as it happens. Open a request for its arguments, output and decision trail.">
      {paused ? (
        <div className="callout callout-warn act-banner">
          <div>
            <strong>The host is paused.</strong> Nothing new starts: requests wait in the queue until you unpause. Runs already going finish normally.
          </div>
          <button type="button" className="primary" onClick={() => void resume()}>
            Unpause host
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
        <div className="act-filter">
          <label htmlFor="act-filter-key">Key</label>
          <select id="act-filter-key" value={keyId} onChange={(e) => (setKeyId(e.target.value), setLimit(PAGE))}>
            <option value="">All keys</option>
            {(keys.data ?? []).map((k) => (
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
        {filtered ? (
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
                The host stopped while these ran, so nobody knows whether they took effect. They are never re-run: check, then record what you found.
              </p>
              <RequestTable
                rows={uncertain}
                label="Uncertain runs"
                keyName={keyName}
                when={{ title: 'Started', of: (r) => r.started_at }}
                showError
                action={(r) => (
                  <button type="button" className="primary" onClick={() => navigate('requests', r.id)} aria-label={`Resolve ${r.id}`}>
                    Resolve…
                  </button>
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
                  <RunningCard key={r.id} run={r} keyName={keyName(r.key_id)} onCancel={() => void cancel(r)} cancelling={cancelling === r.id} />
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
                {finished.length >= limit && limit < 1000 ? (
                  <div className="act-more">
                    <button type="button" onClick={() => setLimit((l) => Math.min(1000, l + PAGE * 2))} disabled={recent.loading}>
                      {recent.loading ? 'Loading…' : 'Show older results'}
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
