// The approval window (approval.html#<id>): a small window over everything else that asks about one
// request. Enter approves, D goes to the reason for denying, Esc closes the window (the request keeps
// waiting on the Approvals screen); Esc in the reason only leaves it.
// The window shows over whatever the person is doing, so nothing approves in its first second on
// screen, or after it gains focus (a key meant for another app must not approve an unseen request).
// The app points it at each new request by changing the hash: an undecided request is never replaced
// under the person; the footer says how many more wait and moves on when asked (or after a decision).
// The card's body scrolls and its decisions stay in view; it is approvable only once all of the body
// has been on screen (every argv element, the environment, the warnings, the intent, each plan step).
// The card's title is the page's h1; the other states say theirs in one too.
import { StrictMode, useCallback, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import type { PendingApprovalView, RequestView } from '../shared/ipc/views';
import { api, errorText } from './api';
import { StateBadge } from './components/StateBadge';
import { Toasts } from './components/Toasts';
import { ApprovalCard, type Decision } from './screens/approvals/ApprovalCard';
import { isTyping } from './screens/approvals/keyboard';
import { reportErrors } from './lib/reportErrors';
import { useLatest } from './lib/useLatest';
import { startStatus, useHostVersion, useStatus, useStatusError } from './stores/status';
import './styles/theme.css';
import './styles/components.css';
import './screens/approvals/approval-window.css';

/** After a decision the window closes by itself (or shows the next request the app asked about). */
const CLOSE_AFTER_MS = 1500;
/** How long a request is on screen (or the window focused) before it can be approved. */
const ARM_MS = 1000;

const idFromHash = () => decodeURIComponent(location.hash.replace(/^#\/?/, ''));
const NO_APPROVALS: PendingApprovalView[] = [];

function closeWindow(): void {
  window.close();
}

function ApprovalWindow() {
  const approvals = useStatus((s) => s.approvals);
  const statusError = useStatusError();
  /** The request on screen. */
  const [shown, setShown] = useState(idFromHash);
  /** The request the app asked about last (the hash). */
  const [asked, setAsked] = useState(idFromHash);
  const [decided, setDecided] = useState<{ id: string; decision: Decision } | null>(null);
  const [gone, setGone] = useState<{ id: string; request: RequestView | null } | null>(null);
  const [lookupError, setLookupError] = useState<string | null>(null);

  const waiting = approvals ?? NO_APPROVALS;
  const pending = waiting.find((p) => p.id === shown) ?? null;
  const others = waiting.filter((p) => p.id !== shown);
  const undecided = pending !== null && decided?.id !== shown;
  /** Where "next" goes: the request the app asked about, else the oldest other one waiting. */
  const next = others.find((p) => p.id === asked) ?? others[0] ?? null;

  const show = useCallback((id: string) => {
    setShown(id);
    setDecided(null);
    setLookupError(null);
  }, []);

  // A new hash (a new arrival): shown at once only if nothing undecided is on screen.
  const holdRef = useLatest(undecided);
  useEffect(() => {
    const onHash = () => {
      const id = idFromHash();
      setAsked(id);
      if (!holdRef.current) show(id);
    };
    window.addEventListener('hashchange', onHash);
    // The user clicked a notification for a request: main asks this open window to show it.
    const stopNavigate = api.app.onNavigate(({ route }) => {
      location.hash = `#${route}`;
    });
    return () => {
      window.removeEventListener('hashchange', onHash);
      stopNavigate();
    };
  }, [show, holdRef]);

  const goNext = () => {
    if (!next) return;
    show(next.id);
    location.hash = `#${encodeURIComponent(next.id)}`;
  };

  // Esc closes the window; in a field it only leaves the field (what was typed there stays).
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape' || e.defaultPrevented) return;
      e.preventDefault();
      if (isTyping(e.target) && e.target instanceof HTMLElement) e.target.blur();
      else closeWindow();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  // Not (or no longer) waiting: find out what became of it (again as it moves on).
  const loaded = approvals !== undefined;
  const version = useHostVersion();
  useEffect(() => {
    if (!loaded || pending || !shown) return;
    let live = true;
    api.requests.get({ id: shown }).then(
      (request) => {
        if (!live) return;
        setGone({ id: shown, request });
        setLookupError(null);
      },
      (e: unknown) => live && setLookupError(errorText(e)),
    );
    return () => {
      live = false;
    };
  }, [loaded, pending, shown, version]);

  // After a decision: the request the app asked about meanwhile, if it still waits; else close.
  const onDecided = useCallback((rid: string, decision: Decision) => setDecided({ id: rid, decision }), []);
  const followUp = decided && asked !== decided.id && waiting.some((p) => p.id === asked) ? asked : null;
  useEffect(() => {
    if (!decided) return;
    const t = setTimeout(() => (followUp ? show(followUp) : closeWindow()), CLOSE_AFTER_MS);
    return () => clearTimeout(t);
  }, [decided, followUp, show]);

  useEffect(() => {
    const steps = pending?.approval.steps;
    document.title = steps ? `Approve a plan of ${steps.length} steps?` : pending ? `Approve ${pending.op}?` : 'Approve a request?';
  }, [pending]);

  // An error shows until the next answer comes: a new status, or the lookup succeeding.
  const error = statusError ?? (pending ? null : lookupError);
  const goneHere = gone && gone.id === shown ? gone.request : undefined;
  let body;
  if (error) {
    body = (
      <>
        <h1 className="offscreen">Approve a request</h1>
        <div className="callout callout-bad" role="alert">
          The host cannot be reached: {error}
        </div>
      </>
    );
  } else if (!shown) {
    body = <h1 className="aw-none muted">No request to show.</h1>;
  } else if (decided && decided.id === shown) {
    body = (
      <div className="aw-done" role="status">
        <h1>{decided.decision === 'denied' ? 'Denied.' : decided.decision === 'approved-for' ? 'Approved, and for a while without asking.' : 'Approved.'}</h1>
        <p className="muted">{followUp ? 'The next request follows.' : 'This window closes by itself.'}</p>
      </div>
    );
  } else if (pending) {
    body = <ApprovalCard key={pending.id} pending={pending} shortcuts="window" armMs={ARM_MS} compact onDecided={onDecided} />;
  } else if (!loaded || goneHere === undefined) {
    body = <h1 className="aw-none muted">Loading…</h1>;
  } else {
    body = (
      <div className="aw-done" role="status">
        <h1>
          {goneHere === null ? (
            <>
              There is no request <code>{shown}</code>.
            </>
          ) : (
            <>
              <code>{goneHere.op}</code> is no longer waiting for you.
            </>
          )}
        </h1>
        {goneHere ? (
          <p>
            It is now <StateBadge state={goneHere.state} />
            {goneHere.decided_by ? <span className="muted"> (decided by {goneHere.decided_by})</span> : null}.
          </p>
        ) : null}
      </div>
    );
  }

  return (
    <main className="aw">
      {body}
      <footer className="aw-footer">
        {next ? (
          <button type="button" className="link" onClick={goNext}>
            {others.length} more waiting · next
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

startStatus();
reportErrors();
createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <ApprovalWindow />
  </StrictMode>,
);
