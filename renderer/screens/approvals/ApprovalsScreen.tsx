// The requests waiting for a human, one at a time in full with its decisions (and keyboard shortcuts
// to go through them quickly), and the time-boxed approvals in force, which can be revoked. A request
// newly in view (the next one, after a decision) is highlighted and cannot be approved for a moment, so
// a second press of A never approves a request nobody has looked at.
import { useEffect, useMemo, useRef, useState } from 'react';
import type { PendingApprovalView } from '../../../shared/ipc/views';
import { api } from '../../api';
import { EmptyState } from '../../components/EmptyState';
import { Page } from '../../components/Page';
import { StateBadge } from '../../components/StateBadge';
import { Time } from '../../components/Time';
import { useLatest } from '../../lib/useLatest';
import { useLoad } from '../../lib/useLoad';
import { navigate } from '../../stores/route';
import { useHostVersion, useStatus } from '../../stores/status';
import { chooseSpool, useChosenSpool } from '../../stores/spool';
import { SpoolBadge, SpoolSwitcher } from '../../components/SpoolSwitcher';
import { ApprovalCard } from './ApprovalCard';
import { GrantsTable } from './GrantsTable';
import { focusNowhere, isTyping, onOtherControl, plainKey } from './keyboard';
import './approvals.css';

const NO_APPROVALS: PendingApprovalView[] = [];
/** How long a request is on screen before A, T or a click can approve it. */
const ARM_MS = 600;

export function ApprovalsScreen({ focusId }: { focusId: string }) {
  const all = useStatus((s) => s.approvals) ?? NO_APPROVALS;
  const spool = useChosenSpool();
  const pending = useMemo(() => (spool ? all.filter((p) => p.spool === spool) : all), [all, spool]);
  const loaded = useStatus(() => true) ?? false;
  const [selected, setSelected] = useState<string>(focusId);
  const listRef = useRef<HTMLDivElement>(null);
  const layoutRef = useRef<HTMLDivElement>(null);

  // The route names a request (from the tray, a notification or Activity): show that one, with every
  // spool's when it came through another spool than the one chosen.
  useEffect(() => {
    if (!focusId) return;
    setSelected(focusId);
    const named = all.find((p) => p.id === focusId);
    if (named && spool && named.spool !== spool) chooseSpool(null);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- only when the route names another request
  }, [focusId]);

  const index = pending.findIndex((p) => p.id === selected);
  // The selected request was decided (here or elsewhere): move on to the one now in its place.
  const [lastIndex, setLastIndex] = useState(0);
  const current = index >= 0 ? pending[index] : pending[Math.min(lastIndex, pending.length - 1)];
  useEffect(() => {
    if (index >= 0) setLastIndex(index);
  }, [index]);

  const move = (delta: number) => {
    if (pending.length === 0) return;
    const i = current ? pending.indexOf(current) : 0;
    const next = pending[Math.max(0, Math.min(pending.length - 1, i + delta))]!;
    setSelected(next.id);
    document.getElementById(optionId(next.id))?.scrollIntoView({ block: 'nearest' });
  };
  const moveRef = useLatest(move);

  // J/K go through the waiting requests (not while typing or on another control); the arrow keys too,
  // but only in the list (or with the focus nowhere in particular): elsewhere they scroll the page.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!plainKey(e)) return;
      const t = e.target;
      if (isTyping(t) || onOtherControl(t, layoutRef.current)) return;
      const k = e.key;
      const arrow = k === 'ArrowDown' || k === 'ArrowUp';
      if (arrow && !(focusNowhere(t) || (t instanceof Node && listRef.current?.contains(t)))) return;
      if (k === 'j' || k === 'J' || k === 'ArrowDown') {
        e.preventDefault();
        moveRef.current(1);
      } else if (k === 'k' || k === 'K' || k === 'ArrowUp') {
        e.preventDefault();
        moveRef.current(-1);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [moveRef]);

  const count = pending.length;
  return (
    <Page
      title="Approvals"
      description={
        count > 0
          ? `${count} ${count === 1 ? 'request is' : 'requests are'} waiting for your decision. Each is denied automatically if nobody decides in time.`
          : 'Requests that need your decision before they run.'
      }
      actions={<SpoolSwitcher />}
    >
      {focusId && !all.some((p) => p.id === focusId) && loaded ? <NoLongerWaiting id={focusId} /> : null}
      {!loaded ? (
        <p className="muted">Loading…</p>
      ) : count === 0 ? (
        <EmptyState title={spool ? `Nothing from spool ${spool} is waiting for you` : 'Nothing is waiting for you'}>
          {spool && all.length > 0 ? `${all.length} waiting from other spools: choose “All spools” to see them. ` : null}
          When the sandbox asks for an operation marked <code>approval: always</code> in the allowlist (or a run that would cross a spend ceiling set to
          ask), it waits here, and a small window asks you on top of everything else.
        </EmptyState>
      ) : (
        <div className="approvals-layout" ref={layoutRef}>
          <div className="approvals-queue">
            <h2 id="queue-title">
              Waiting <span className="badge badge-warn">{count}</span>
            </h2>
            <div
              ref={listRef}
              role="listbox"
              aria-labelledby="queue-title"
              tabIndex={0}
              className="approvals-list"
              aria-activedescendant={current ? optionId(current.id) : undefined}
            >
              {pending.map((p) => (
                <div
                  key={p.id}
                  id={optionId(p.id)}
                  role="option"
                  aria-selected={p === current}
                  className="approvals-option"
                  onClick={() => {
                    setSelected(p.id);
                    listRef.current?.focus();
                  }}
                >
                  <code className="approvals-op">{p.op}</code>
                  <span className="approvals-meta">
                    {p.approval.key_name} <SpoolBadge spool={p.spool} /> · {p.approval.steps ? `${p.approval.steps.length} steps · ` : null}
                    <Time iso={p.waiting_since} />
                  </span>
                  <span className="approvals-id muted">{p.id}</span>
                </div>
              ))}
            </div>
            <Shortcuts plan={current?.approval.steps !== undefined} />
          </div>
          {current ? (
            <ApprovalCard
              key={current.id}
              pending={current}
              shortcuts="screen"
              armMs={ARM_MS}
              onDecided={() => {
                // Keep the keyboard on the screen, ready for the next one.
                listRef.current?.focus();
              }}
            />
          ) : null}
        </div>
      )}
      <GrantsTable />
    </Page>
  );
}

function optionId(id: string): string {
  return `pending-${id}`;
}

/** `plan`: the shown request is a plan, which cannot be approved for a while (no T). */
function Shortcuts({ plan }: { plan: boolean }) {
  return (
    <dl className="shortcuts" aria-label="Keyboard shortcuts">
      <dt>
        <kbd>J</kbd> <kbd>K</kbd>
      </dt>
      <dd>next / previous</dd>
      <dt>
        <kbd>A</kbd>
      </dt>
      <dd>approve</dd>
      {plan ? null : (
        <>
          <dt>
            <kbd>T</kbd>
          </dt>
          <dd>approve for the chosen time</dd>
        </>
      )}
      <dt>
        <kbd>D</kbd>
      </dt>
      <dd>
        deny: type a reason, then <kbd>Enter</kbd>
      </dd>
    </dl>
  );
}

/** The route names a request that is not (or no longer) waiting: say what became of it. */
function NoLongerWaiting({ id }: { id: string }) {
  const version = useHostVersion();
  const req = useLoad(() => api.requests.get({ id }), [id], version);
  const r = req.data;
  if (r === undefined) return null;
  return (
    <div className="callout callout-info approvals-gone">
      {r === null ? (
        <>
          There is no request <code>{id}</code>.
        </>
      ) : (
        <>
          <code>{id}</code> is no longer waiting: <StateBadge state={r.state} />
          {r.decided_by ? <span className="muted"> by {r.decided_by}</span> : null}{' '}
          <button type="button" className="link" onClick={() => navigate('requests', id)}>
            Show the request
          </button>
        </>
      )}
    </div>
  );
}
