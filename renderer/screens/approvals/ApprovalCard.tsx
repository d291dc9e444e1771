// One request waiting for a human, in full, with its decisions: approve, approve for some minutes
// (a time-boxed grant for this key and operation, for later calls with the arguments the person chose),
// deny with a reason. The Approvals screen and the small approval window both show it; each gives it
// its own keyboard shortcuts.
// What decides the run (the command, each argv element apart, its folder, environment and limits, the
// warnings, the intent, a plan it claims, every step of a plan) scrolls in the card's body; the
// decisions stay below it, in view whatever the lengths. Nothing approves the request until every part
// of the body has been on screen in full (useAllSeen), and then not in its first moment (`armMs`): the
// Approve buttons fill up, then work. A plan cannot be approved for a while (a grant would approve the
// next plans unseen).
import { useEffect, useId, useRef, useState, type CSSProperties } from 'react';
import { GRANT_MINUTES, type PendingApprovalView } from '../../../shared/ipc/views';
import { visible, visibleLines } from '../../../shared/text/visible';
import { api, errorText } from '../../api';
import { Argv } from '../../components/Argv';
import { PlanSteps, stepPart } from '../../components/PlanSteps';
import { LeavesWarning, RunFacts } from '../../components/RunFacts';
import { Time } from '../../components/Time';
import { formatSpan, formatTime } from '../../lib/format';
import { MUST_SEE, useAllSeen } from '../../lib/useAllSeen';
import { useLatest } from '../../lib/useLatest';
import { useSeveralSpools } from '../../stores/spool';
import { toast } from '../../stores/toasts';
import { GrantScope, missingPattern, widenOf, type ArgChoices } from './GrantScope';
import { focusNowhere, isTyping, onOtherControl, plainKey } from './keyboard';
import { useArmed } from './useArmed';
import './approvals.css';

export type Decision = 'approved' | 'approved-for' | 'denied';

/** Marks a part of the body that must have been on screen before Approve arms. */
const part = (name: string) => ({ [MUST_SEE]: name });

/** How far each scrolling key moves the body, as the browser would move it if it had the focus. */
const SCROLL_KEYS: Record<string, (body: HTMLElement) => number> = {
  ArrowDown: () => 40,
  ArrowUp: () => -40,
  PageDown: (b) => b.clientHeight * 0.875,
  ' ': (b) => b.clientHeight * 0.875,
  PageUp: (b) => -b.clientHeight * 0.875,
  Home: (b) => -b.scrollHeight,
  End: (b) => b.scrollHeight,
};

/**
 * `shortcuts`: which keys act on this card while it is shown (never while typing in a field or on a
 * control outside the card). 'screen': A approves, T approves for the chosen minutes, D focuses the
 * reason (Enter there denies). 'window': Enter approves, D focuses the reason, the scrolling keys
 * (arrows, Page Up/Down, space, Home, End) scroll the body.
 * Show one request per card (`key={pending.id}`): its decisions are armed for that request only.
 * `armMs`: how long the request is on screen before it can be approved; in the window, also after the
 * window gains focus. `compact`: in the small approval window, where the card is the page (its title
 * the page's h1) and grants last 30 minutes.
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
  const [choices, setChoices] = useState<ArgChoices>({});
  const [busy, setBusy] = useState<Decision | null>(null);
  // Decided from this card: it stays inert until the host's state replaces it.
  const [done, setDone] = useState<Decision | null>(null);
  const reasonRef = useRef<HTMLInputElement>(null);
  const cardRef = useRef<HTMLElement>(null);
  const bodyRef = useRef<HTMLDivElement>(null);
  const uid = useId();
  const busyRef = useRef(false);
  const steps = a.steps ?? null;
  const isPlan = steps !== null;
  // What the host says of the run besides the wire's approval (environment, limits): without it the
  // card would not show all that decides the run, so it cannot be approved.
  const complete = steps ? pending.steps?.length === steps.length : pending.run !== null;
  const { parts, seen } = useAllSeen(bodyRef, pending.id);
  const allShown = complete && parts.length > 0 && seen.size === parts.length;
  const stepsSeen = steps?.filter((_, i) => seen.has(stepPart(i))).length ?? 0;
  // The moment on screen starts again once the last part came into view: it too must be read.
  const armed = useArmed(allShown ? pending.id : `${pending.id}#unseen`, armMs, shortcuts === 'window') && allShown;
  const patternMissing = missingPattern(choices);
  const armedRef = useLatest(armed);

  const decide = async (d: Decision, forMinutes = minutes) => {
    if (busyRef.current || done) return;
    if (d !== 'denied' && !armedRef.current) return;
    if (d === 'approved-for' && (isPlan || patternMissing !== null)) return;
    busyRef.current = true;
    setBusy(d);
    try {
      if (d === 'denied') {
        await api.approvals.deny({ id: pending.id, reason: reason.trim() });
        toast(`Denied ${pending.id}`);
      } else {
        const widen = widenOf(choices);
        const out = await api.approvals.approve(d === 'approved-for' ? { id: pending.id, forSeconds: forMinutes * 60, ...(widen ? { widen } : {}) } : { id: pending.id });
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
  const decideRef = useLatest(decide);

  useEffect(() => {
    if (!shortcuts) return;
    const onKey = (e: KeyboardEvent) => {
      if (!plainKey(e)) return;
      const t = e.target;
      // Typing (the reason, a pattern) or on another control (Revoke, Close, …): the keys are theirs.
      if (isTyping(t) || onOtherControl(t, cardRef.current)) return;
      const k = e.key.toLowerCase();
      if (k === 'd') {
        e.preventDefault();
        reasonRef.current?.focus();
      } else if (shortcuts === 'screen' && (k === 'a' || (k === 't' && !isPlan))) {
        e.preventDefault();
        // Not yet armed: not all of it was on screen, or this press was meant for the request before.
        if (armedRef.current) void decideRef.current(k === 'a' ? 'approved' : 'approved-for');
      } else if (shortcuts === 'window' && e.key === 'Enter') {
        // Enter on one of the card's buttons clicks that button instead.
        if (t instanceof Element && t.closest('button, a[href]')) return;
        e.preventDefault();
        if (armedRef.current) void decideRef.current('approved');
      } else if (shortcuts === 'window' && focusNowhere(t) && Object.hasOwn(SCROLL_KEYS, e.key) && bodyRef.current) {
        // The window shows without taking the focus, and only its body scrolls: the first scrolling key
        // moves the body and gives it the focus, so that the next ones scroll it as usual.
        e.preventDefault();
        const body = bodyRef.current;
        body.focus({ preventScroll: true });
        body.scrollBy({ top: SCROLL_KEYS[e.key]!(body) });
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [shortcuts, isPlan, armedRef, decideRef]);

  const titleId = `${uid}-title`;
  const armingId = `${uid}-arming`;
  const seenId = `${uid}-seen`;
  const grantMinutes = compact ? 30 : minutes;
  const inert = busy !== null || done !== null;
  const approveOff = inert || !armed;
  // The Approve buttons fill up while the request is new on screen.
  const arming = armed || inert || !allShown ? null : <span className="approval-arming" aria-hidden="true" style={{ '--arm-ms': `${armMs}ms` } as CSSProperties} />;
  const describedBy = arming ? armingId : seenId;
  const Heading = compact ? 'h1' : 'h2';
  return (
    <article ref={cardRef} className={`approval-card approval-fresh${compact ? ' approval-compact' : ' card'}`} aria-labelledby={titleId}>
      <header className="approval-head">
        <Heading id={titleId}>
          {steps ? (
            <>
              Approve a plan of {steps.length} {steps.length === 1 ? 'step' : 'steps'}?
            </>
          ) : (
            <>
              Run <code>{visible(a.operation)}</code>?
            </>
          )}
        </Heading>
        <span className="approval-deadline muted" title={`Denied automatically at ${formatTime(a.timeout_at)}`}>
          Auto-denied <Time iso={a.timeout_at} />
        </span>
      </header>
      <div ref={bodyRef} className="approval-body" tabIndex={0} role="group" aria-label="The request in full">
        {a.plan_claim ? (
          <div className="callout callout-warn approval-claim" role="note" {...part('claim')}>
            <strong>
              Claims plan <code>{visible(a.plan_claim.plan_id)}</code>, but differs from its steps:
            </strong>{' '}
            {visibleLines(a.plan_claim.reason)}. It is not one of that plan’s approved steps, so it asks you like any request.
          </div>
        ) : null}
        {a.ceiling ? (
          <div className="callout callout-warn approval-ceiling" {...part('ceiling')}>
            Asked because this run would cross a spend limit: <strong>{a.ceiling}</strong>.
          </div>
        ) : null}
        <dl className="facts approval-facts" {...part('facts')}>
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
          <>
            <p className="approval-label">
              Each step runs once, without asking again, until the plan expires
              {pending.expires_at ? (
                <>
                  {' '}
                  <Time iso={pending.expires_at} />
                </>
              ) : null}
              .
            </p>
            <PlanSteps steps={steps} runs={pending.steps} mustSee />
          </>
        ) : (
          <>
            <div className="approval-command" {...part('command')}>
              <div className="approval-label">Command that runs</div>
              <Argv argv={a.argv} cwd={a.cwd} />
            </div>
            {pending.run ? (
              <div {...part('run')}>
                <RunFacts run={pending.run} />
              </div>
            ) : null}
          </>
        )}
        {a.shared_with_sandbox?.length ? (
          <div className="callout callout-warn approval-shared" role="note" {...part('shared')}>
            This command works on folders <strong>the sandbox can write</strong>: what it reads there is what the sandbox put there, and what
            it writes the sandbox can read or change. Shared with the sandbox:{' '}
            {a.shared_with_sandbox.map((r, i) => (
              <span key={r}>
                {i > 0 ? ', ' : null}
                <code>{visible(r)}</code>
              </span>
            ))}
            .
          </div>
        ) : null}
        {!steps && (a.leaves_processes || pending.run?.leaves_processes) ? (
          <div {...part('leaves')}>
            <LeavesWarning />
          </div>
        ) : null}
        {steps ? null : (
          <GrantScope args={pending.args} choices={choices} onChange={(name, c) => setChoices((cs) => ({ ...cs, [name]: c }))} disabled={inert} />
        )}
      </div>
      <div className="approval-actions">
        <p id={seenId} className={`approval-seen${allShown ? ' muted' : ''}`}>
          <SeenLine complete={complete} allShown={allShown} steps={steps?.length ?? null} stepsSeen={stepsSeen} />
          {allShown && patternMissing !== null ? (
            <>
              {' '}
              Type the pattern for <code>{patternMissing}</code> to approve for a while.
            </>
          ) : null}
        </p>
        <div className="row">
          <button
            type="button"
            className="primary approval-approve"
            disabled={approveOff}
            onClick={() => void decide('approved')}
            aria-keyshortcuts={shortcuts === 'window' ? 'Enter' : shortcuts === 'screen' ? 'A' : undefined}
            aria-describedby={describedBy}
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
              disabled={approveOff || patternMissing !== null}
              onClick={() => void decide('approved-for', grantMinutes)}
              aria-describedby={describedBy}
              aria-keyshortcuts={shortcuts === 'screen' ? 'T' : undefined}
              title={`Approve this, and for the next ${formatSpan(grantMinutes * 60)} every ${a.operation} request from ${a.key_name} whose arguments are as chosen above, without asking`}
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

/** Whether all of the request has been on screen, and if not, what is left to do. */
function SeenLine({ complete, allShown, steps, stepsSeen }: { complete: boolean; allShown: boolean; steps: number | null; stepsSeen: number }) {
  if (!complete) return <>The host did not send all that decides this run (its environment and limits): it cannot be approved here.</>;
  if (steps === null) return <>{allShown ? 'All of the request has been on screen.' : 'Scroll through the whole request to approve it.'}</>;
  if (allShown) return <>{steps === 1 ? 'The step has' : `All ${steps} steps have`} been on screen.</>;
  return (
    <>
      Scroll through every step to approve: {stepsSeen} of {steps} seen so far.
    </>
  );
}
