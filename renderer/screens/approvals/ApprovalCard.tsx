// One request waiting for a human, in full, with its decisions: approve, approve for some minutes
// (a time-boxed grant for this key and operation), deny with a reason. The Approvals screen and the
// small approval window both show it; each gives it its own keyboard shortcuts.
import { useEffect, useId, useRef, useState } from 'react';
import type { PendingApprovalView } from '../../../shared/ipc/views';
import { api, errorText } from '../../api';
import { Argv } from '../../components/Argv';
import { Time } from '../../components/Time';
import { formatTime } from '../../lib/format';
import { toast } from '../../stores/toasts';
import './approvals.css';

export type Decision = 'approved' | 'approved-for' | 'denied';

/** How long a time-boxed approval may last, in minutes. */
export const GRANT_MINUTES = [5, 15, 30, 60, 120, 240, 480] as const;

/**
 * `shortcuts`: which keys act on this card while it is shown. 'screen': A approves, T approves for the
 * chosen minutes, D focuses the reason (Enter there denies). 'window': Enter approves, D focuses the reason.
 */
export function ApprovalCard({
  pending,
  shortcuts,
  compact = false,
  onDecided,
}: {
  pending: PendingApprovalView;
  shortcuts: 'screen' | 'window' | null;
  compact?: boolean;
  onDecided?: (id: string, decision: Decision) => void;
}) {
  const a = pending.approval;
  const [reason, setReason] = useState('');
  const [minutes, setMinutes] = useState(30);
  const [busy, setBusy] = useState<Decision | null>(null);
  const reasonRef = useRef<HTMLInputElement>(null);
  const uid = useId();
  const busyRef = useRef(false);

  // A new request on the same card: start from a clean reason.
  useEffect(() => {
    setReason('');
  }, [pending.id]);

  const decide = async (d: Decision, forMinutes = minutes) => {
    if (busyRef.current) return;
    busyRef.current = true;
    setBusy(d);
    try {
      if (d === 'denied') {
        await api.approvals.deny({ id: pending.id, reason: reason.trim() });
        toast(`Denied ${pending.id}`);
      } else {
        const out = await api.approvals.approve(d === 'approved-for' ? { id: pending.id, forSeconds: forMinutes * 60 } : { id: pending.id });
        const also = out.also_approved.length ? `; also approved ${out.also_approved.length} more waiting` : '';
        toast(d === 'approved-for' ? `Approved ${a.operation} for ${a.key_name} for ${minutesText(forMinutes)}${also}` : `Approved ${pending.id}`);
      }
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
      if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || e.repeat) return;
      if (document.querySelector('dialog[open]')) return;
      const t = e.target as HTMLElement | null;
      const typing = !!t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT' || t.isContentEditable);
      if (typing) return;
      const k = e.key.toLowerCase();
      if (k === 'd') {
        e.preventDefault();
        reasonRef.current?.focus();
      } else if (shortcuts === 'screen' && k === 'a') {
        e.preventDefault();
        void decideRef.current('approved');
      } else if (shortcuts === 'screen' && k === 't') {
        e.preventDefault();
        void decideRef.current('approved-for');
      } else if (shortcuts === 'window' && e.key === 'Enter') {
        // Enter on a focused button clicks that button instead.
        if (t && (t.tagName === 'BUTTON' || t.tagName === 'A')) return;
        e.preventDefault();
        void decideRef.current('approved');
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [shortcuts]);

  const titleId = `${uid}-title`;
  const grantMinutes = compact ? 30 : minutes;
  return (
    <article className={compact ? 'approval-card approval-compact' : 'approval-card card'} aria-labelledby={titleId}>
      <header className="approval-head">
        <h2 id={titleId}>
          Run <code>{a.operation}</code>?
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
        <dt>Why</dt>
        <dd>{a.intent ? <q className="approval-intent">{a.intent}</q> : <span className="muted">The agent gave no reason.</span>}</dd>
        <dt>Request</dt>
        <dd>
          <code>{pending.id}</code> <span className="muted">· asked <Time iso={a.requested_at} /></span>
        </dd>
      </dl>
      <div className="approval-command">
        <div className="approval-label">Command that runs</div>
        <Argv argv={a.argv} cwd={a.cwd} />
      </div>
      <div className="approval-actions">
        <div className="row">
          <button type="button" className="primary" disabled={busy !== null} onClick={() => void decide('approved')} aria-keyshortcuts={shortcuts === 'window' ? 'Enter' : shortcuts === 'screen' ? 'A' : undefined}>
            {busy === 'approved' ? 'Approving…' : 'Approve'}
            {shortcuts ? <kbd aria-hidden="true">{shortcuts === 'window' ? '↵' : 'A'}</kbd> : null}
          </button>
          {compact ? null : (
            <select value={minutes} onChange={(e) => setMinutes(Number(e.target.value))} disabled={busy !== null} aria-label="Minutes to approve for">
              {GRANT_MINUTES.map((m) => (
                <option key={m} value={m}>
                  {minutesText(m)}
                </option>
              ))}
            </select>
          )}
          <button
            type="button"
            disabled={busy !== null}
            onClick={() => void decide('approved-for', grantMinutes)}
            aria-keyshortcuts={shortcuts === 'screen' ? 'T' : undefined}
            title={`Approve this and every ${a.operation} request from ${a.key_name} for the next ${grantMinutes} minutes, without asking`}
          >
            {busy === 'approved-for' ? 'Approving…' : `Approve for ${minutesText(grantMinutes)}`}
            {shortcuts === 'screen' ? <kbd aria-hidden="true">T</kbd> : null}
          </button>
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
            disabled={busy !== null}
            aria-keyshortcuts="D"
          />
          <button type="submit" className="danger" disabled={busy !== null}>
            {busy === 'denied' ? 'Denying…' : 'Deny'}
            {shortcuts ? <kbd aria-hidden="true">D</kbd> : null}
          </button>
        </form>
      </div>
    </article>
  );
}

export function minutesText(m: number): string {
  return m < 60 ? `${m} min` : m % 60 === 0 ? `${m / 60} h` : `${Math.floor(m / 60)} h ${m % 60} min`;
}
