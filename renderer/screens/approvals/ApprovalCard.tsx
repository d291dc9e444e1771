// One request waiting for a human, in full, with its decisions: approve, approve for some minutes
// (a time-boxed grant for this key and operation), deny with a reason. The Approvals screen and the
// small approval window both show it; each gives it its own keyboard shortcuts. Nothing approves it in
// its first moment on screen (`armMs`): the Approve buttons fill up, then work. A plan (`dumbwaiter.plan`)
// lists every step's command; it arms only once each step has been on screen, and cannot be approved
// for a while (a grant would approve the next plans unseen).
import { useEffect, useId, useRef, useState, type CSSProperties } from 'react';
import type { PendingApprovalView } from '../../../shared/ipc/views';
import { api, errorText } from '../../api';
import { Argv } from '../../components/Argv';
import { PlanSteps } from '../../components/PlanSteps';
import { useAllSeen } from '../../lib/useAllSeen';
import { visibleLines } from '../../../shared/text/visible';
import { Time } from '../../components/Time';
import { formatSpan, formatTime } from '../../lib/format';
import { toast } from '../../stores/toasts';
import { isTyping, onOtherControl, plainKey } from './keyboard';
import { useArmed } from './useArmed';
import { useSeveralSpools } from '../../stores/spool';
import './approvals.css';

export type Decision = 'approved' | 'approved-for' | 'denied';

/** How long a time-boxed approval may last, in minutes. */
const GRANT_MINUTES = [5, 15, 30, 60, 120, 240, 480] as const;

/**
 * `shortcuts`: which keys act on this card while it is shown (never while typing in a field or on a
 * control outside the card). 'screen': A approves, T approves for the chosen minutes, D focuses the
 * reason (Enter there denies). 'window': Enter approves, D focuses the reason.
 * Show one request per card (`key={pending.id}`): its decisions are armed for that request only.
 * `armMs`: how long the request is on screen before it can be approved; in the window, also after the
 * window gains focus.
 */
export function ApprovalCard({
  pending,
  shortcuts,
  armMs,
  compact = false,
  onDecided,
}: {
  pending: PendingApprovalView;
  shortcuts: 'screen' | 'window' | null;
  armMs: number;
  compact?: boolean;
  onDecided?: (id: string, decision: Decision) => void;
}) {
  const a = pending.approval;
  const several = useSeveralSpools();
  const [reason, setReason] = useState('');
  const [minutes, setMinutes] = useState(30);
  const [busy, setBusy] = useState<Decision | null>(null);
  // Decided from this card: it stays inert until the host's state replaces it.
  const [done, setDone] = useState<Decision | null>(null);
  const reasonRef = useRef<HTMLInputElement>(null);
  const cardRef = useRef<HTMLElement>(null);
  const uid = useId();
  const busyRef = useRef(false);
  const steps = a.steps ?? null;
  const isPlan = steps !== null;
  const stepsRef = useRef<HTMLDivElement>(null);
  const stepsSeen = useAllSeen(stepsRef, steps?.length ?? 0, pending.id);
  const allShown = steps === null || stepsSeen === steps.length;
  // The moment on screen starts again once the last step came into view: it too must be read.
  const armed = useArmed(allShown ? pending.id : `${pending.id}#steps`, armMs, shortcuts === 'window') && allShown;
  const armedRef = useRef(armed);
  useEffect(() => {
    armedRef.current = armed;
  });

  const decide = async (d: Decision, forMinutes = minutes) => {
    if (busyRef.current || done) return;
    if (d !== 'denied' && !armedRef.current) return;
    if (d === 'approved-for' && isPlan) return;
    busyRef.current = true;
    setBusy(d);
    try {
      if (d === 'denied') {
        await api.approvals.deny({ id: pending.id, reason: reason.trim() });
        toast(`Denied ${pending.id}`);
      } else {
        const out = await api.approvals.approve(d === 'approved-for' ? { id: pending.id, forSeconds: forMinutes * 60 } : { id: pending.id });
        const also = out.also_approved.length ? `; also approved ${out.also_approved.length} more waiting` : '';
        toast(d === 'approved-for' ? `Approved ${a.operation} for ${a.key_name} for ${formatSpan(forMinutes * 60)}${also}` : `Approved ${pending.id}`);
      }
      setDone(d);
      onDecided?.(pending.id, d);
    } catch (e) {
      toast(errorText(e), 'error');
    } finally {
      busyRef.current = false;
      setBusy(null);
    }
  };

  // The latest decide, for the key listener (registered once per card and shortcut set).
  const decideRef = useRef(decide);
  useEffect(() => {
    decideRef.current = decide;
  });

  useEffect(() => {
    if (!shortcuts) return;
    const onKey = (e: KeyboardEvent) => {
      if (!plainKey(e)) return;
      const t = e.target;
      // Typing (the reason, the minutes) or on another control (Revoke, Close, …): the keys are theirs.
      if (isTyping(t) || onOtherControl(t, cardRef.current)) return;
      const k = e.key.toLowerCase();
      if (k === 'd') {
        e.preventDefault();
        reasonRef.current?.focus();
      } else if (shortcuts === 'screen' && (k === 'a' || (k === 't' && !isPlan))) {
        e.preventDefault();
        // Not yet armed: this press was meant for the request before, or is too quick to be read.
        if (armedRef.current) void decideRef.current(k === 'a' ? 'approved' : 'approved-for');
      } else if (shortcuts === 'window' && e.key === 'Enter') {
        // Enter on one of the card's buttons clicks that button instead.
        if (t instanceof Element && t.closest('button, a[href]')) return;
        e.preventDefault();
        if (armedRef.current) void decideRef.current('approved');
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [shortcuts, isPlan]);

  const titleId = `${uid}-title`;
  const armingId = `${uid}-arming`;
  const grantMinutes = compact ? 30 : minutes;
  const inert = busy !== null || done !== null;
  const approveOff = inert || !armed;
  // The Approve buttons fill up while the request is new on screen.
  const arming = armed || inert || !allShown ? null : <span className="approval-arming" aria-hidden="true" style={{ '--arm-ms': `${armMs}ms` } as CSSProperties} />;
  const unseenId = `${uid}-unseen`;
  return (
    <article ref={cardRef} className={`approval-card approval-fresh${compact ? ' approval-compact' : ' card'}`} aria-labelledby={titleId}>
      <header className="approval-head">
        <h2 id={titleId}>
          {steps ? (
            <>
              Approve a plan of {steps.length} {steps.length === 1 ? 'step' : 'steps'}?
            </>
          ) : (
            <>
              Run <code>{a.operation}</code>?
            </>
          )}
        </h2>
        <span className="approval-deadline muted" title={`Denied automatically at ${formatTime(a.timeout_at)}`}>
          Auto-denied <Time iso={a.timeout_at} />
        </span>
      </header>
      {a.ceiling ? (
        <div className="callout callout-warn approval-ceiling">
          Asked because this run would cross the spend ceiling <strong>{a.ceiling}</strong>.
        </div>
      ) : null}
      <dl className="facts approval-facts">
        <dt>Key</dt>
        <dd>
          {a.key_name} <code className="muted">{a.key_id}</code>
        </dd>
        {several ? (
          <>
            <dt>Spool</dt>
            <dd>{pending.spool}</dd>
          </>
        ) : null}
        <dt>Why</dt>
        <dd>{a.intent ? <q className="approval-intent">{visibleLines(a.intent)}</q> : <span className="muted">The agent gave no reason.</span>}</dd>
        <dt>Request</dt>
        <dd>
          <code>{pending.id}</code> <span className="muted">· asked <Time iso={a.requested_at} /></span>
        </dd>
      </dl>
      {steps ? (
        <div className="approval-command approval-plan">
          <div className="approval-label">
            {compact ? 'Steps' : 'What it lets run, each step once, without asking again'}
            {pending.expires_at ? (
              <>
                {' '}
                until <Time iso={pending.expires_at} />
              </>
            ) : null}{' '}
            <span className="muted" id={unseenId}>
              {allShown ? `(all ${steps.length} shown)` : `(${stepsSeen} of ${steps.length} shown: scroll through every step to approve)`}
            </span>
          </div>
          <div ref={stepsRef} className="plan-scroll" tabIndex={0} role="group" aria-label="Steps of the plan">
            <PlanSteps steps={steps} marks />
          </div>
        </div>
      ) : (
        <div className="approval-command">
          <div className="approval-label">Command that runs</div>
          <Argv argv={a.argv} cwd={a.cwd} />
        </div>
      )}
      {a.shared_with_sandbox?.length ? (
        <div className="callout callout-warn approval-shared" role="note">
          This command works on folders <strong>the sandbox can write</strong>: what it reads there is what the sandbox put there, and what
          it writes the sandbox can read or change. Shared with the sandbox:{' '}
          {a.shared_with_sandbox.map((r, i) => (
            <span key={r}>
              {i > 0 ? ', ' : null}
              <code>{r}</code>
            </span>
          ))}
          .
        </div>
      ) : null}
      {a.leaves_processes ? (
        <div className="callout callout-warn approval-leaves">
          What this command starts may <strong>keep running after it ends</strong>: its operation leaves processes running (they are not stopped with it).
        </div>
      ) : null}
      <div className="approval-actions">
        <div className="row">
          <button
            type="button"
            className="primary approval-approve"
            disabled={approveOff}
            onClick={() => void decide('approved')}
            aria-keyshortcuts={shortcuts === 'window' ? 'Enter' : shortcuts === 'screen' ? 'A' : undefined}
            aria-describedby={arming ? armingId : allShown ? undefined : unseenId}
          >
            {arming}
            {busy === 'approved' ? 'Approving…' : done === 'approved' ? 'Approved' : 'Approve'}
            {shortcuts ? <kbd aria-hidden="true">{shortcuts === 'window' ? '↵' : 'A'}</kbd> : null}
          </button>
          {compact || isPlan ? null : (
            <select value={minutes} onChange={(e) => setMinutes(Number(e.target.value))} disabled={inert} aria-label="Minutes to approve for">
              {GRANT_MINUTES.map((m) => (
                <option key={m} value={m}>
                  {formatSpan(m * 60)}
                </option>
              ))}
            </select>
          )}
          {isPlan ? null : (
            <button
              type="button"
              className="approval-approve"
              disabled={approveOff}
              onClick={() => void decide('approved-for', grantMinutes)}
              aria-describedby={arming ? armingId : undefined}
              aria-keyshortcuts={shortcuts === 'screen' ? 'T' : undefined}
              title={`Approve this and every ${a.operation} request from ${a.key_name} for the next ${grantMinutes} minutes, without asking`}
            >
              {arming}
              {busy === 'approved-for' ? 'Approving…' : `Approve for ${formatSpan(grantMinutes * 60)}`}
              {shortcuts === 'screen' ? <kbd aria-hidden="true">T</kbd> : null}
            </button>
          )}
          {arming ? (
            <span id={armingId} className="offscreen">
              New request: approving is possible in a moment.
            </span>
          ) : null}
        </div>
        <form
          className="row approval-deny"
          onSubmit={(e) => {
            e.preventDefault();
            void decide('denied');
          }}
        >
          <input
            ref={reasonRef}
            value={reason}
            onChange={(e) => setReason(e.target.value)}
            aria-label="Reason for denying"
            placeholder="Reason for denying (the agent sees it)"
            maxLength={2000}
            disabled={inert}
            aria-keyshortcuts="D"
          />
          <button type="submit" className="danger" disabled={inert}>
            {busy === 'denied' ? 'Denying…' : done === 'denied' ? 'Denied' : 'Deny'}
            {shortcuts ? <kbd aria-hidden="true">D</kbd> : null}
          </button>
        </form>
      </div>
    </article>
  );
}

