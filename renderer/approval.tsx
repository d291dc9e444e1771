// The approval window (approval.html#<id>): a small window over everything else that asks about one
// request. Enter approves, D goes to the reason for denying, Esc closes the window (the request keeps
// waiting on the Approvals screen).
import { StrictMode, useCallback, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import type { RequestView, StatusView } from '../shared/ipc/views';
import { api, errorText } from './api';
import { StateBadge } from './components/StateBadge';
import { Toasts } from './components/Toasts';
import { ApprovalCard, type Decision } from './screens/approvals/ApprovalCard';
import './styles/theme.css';
import './styles/components.css';
import './screens/approvals/approval-window.css';

/** After a decision the window closes by itself, once the person has seen what happened. */
const CLOSE_AFTER_MS = 1500;

const idFromHash = () => decodeURIComponent(location.hash.replace(/^#\/?/, ''));

function closeWindow(): void {
  window.close();
}

function ApprovalWindow() {
  const [id, setId] = useState(idFromHash);
  const [status, setStatus] = useState<StatusView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [decided, setDecided] = useState<{ id: string; decision: Decision } | null>(null);
  const [gone, setGone] = useState<RequestView | null | undefined>(undefined);

  useEffect(() => {
    // The app reuses this window for the next request: it only changes the hash.
    const onHash = () => {
      setId(idFromHash());
      setDecided(null);
      setGone(undefined);
    };
    window.addEventListener('hashchange', onHash);
    const off = api.state.onChanged((s) => setStatus(s));
    api.status.get().then(setStatus, (e: unknown) => setError(errorText(e)));
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape' && !e.defaultPrevented) {
        e.preventDefault();
        closeWindow();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => {
      off();
      window.removeEventListener('hashchange', onHash);
      window.removeEventListener('keydown', onKey);
    };
  }, []);

  const pending = status?.approvals.find((p) => p.id === id) ?? null;
  const others = status ? status.approvals.filter((p) => p.id !== id) : [];
  const waiting = pending !== null;

  // Not (or no longer) waiting: find out what became of it.
  useEffect(() => {
    if (!status || waiting || !id) return;
    let live = true;
    api.requests.get({ id }).then(
      (r) => live && setGone(r),
      (e: unknown) => live && setError(errorText(e)),
    );
    return () => {
      live = false;
    };
  }, [status, waiting, id]);

  const onDecided = useCallback((rid: string, decision: Decision) => setDecided({ id: rid, decision }), []);
  useEffect(() => {
    if (!decided) return;
    const t = setTimeout(closeWindow, CLOSE_AFTER_MS);
    return () => clearTimeout(t);
  }, [decided]);

  useEffect(() => {
    document.title = pending ? `Approve ${pending.op}?` : 'Approve a request?';
  }, [pending]);

  let body;
  if (error) {
    body = (
      <div className="callout callout-bad" role="alert">
        The host cannot be reached: {error}
      </div>
    );
  } else if (!id) {
    body = <p className="muted">No request to show.</p>;
  } else if (decided && decided.id === id) {
    body = (
      <div className="aw-done" role="status">
        <strong>{decided.decision === 'denied' ? 'Denied.' : decided.decision === 'approved-for' ? 'Approved, and for a while without asking.' : 'Approved.'}</strong>
        <p className="muted">This window closes by itself.</p>
      </div>
    );
  } else if (pending) {
    body = <ApprovalCard pending={pending} shortcuts="window" compact onDecided={onDecided} />;
  } else if (status === null || gone === undefined) {
    body = <p className="muted">Loading…</p>;
  } else {
    body = (
      <div className="aw-done" role="status">
        <strong>
          {gone === null ? (
            <>
              There is no request <code>{id}</code>.
            </>
          ) : (
            <>
              <code>{gone.op}</code> is no longer waiting for you.
            </>
          )}
        </strong>
        {gone ? (
          <p>
            It is now <StateBadge state={gone.state} />
            {gone.decided_by ? <span className="muted"> (decided by {gone.decided_by})</span> : null}.
          </p>
        ) : null}
      </div>
    );
  }

  return (
    <main className="aw">
      {body}
      <footer className="aw-footer">
        {others.length > 0 ? (
          <button type="button" className="link" onClick={() => (location.hash = `#${encodeURIComponent(others[0]!.id)}`)}>
            {others.length} more waiting: next
          </button>
        ) : (
          <span />
        )}
        <span className="muted aw-keys">
          <kbd>Esc</kbd> close
        </span>
        <button type="button" onClick={closeWindow}>
          Close
        </button>
      </footer>
      <Toasts />
    </main>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <ApprovalWindow />
  </StrictMode>,
);
