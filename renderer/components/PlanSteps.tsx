// A plan's steps, every one in full: its operation and scope, and the exact command and folder it runs.
// On a decided plan, the request that used each step and that request's state. `marks`: each step ends
// in a mark that useAllSeen watches (the approval card arms only once all were on screen).
import type { PlanStep } from '../../shared/protocol/types';
import { visible } from '../../shared/text/visible';
import { SEEN_MARK } from '../lib/useAllSeen';
import { Argv } from './Argv';
import { StateBadge } from './StateBadge';

export function PlanSteps({ steps, marks = false, uses = false }: { steps: PlanStep[]; marks?: boolean; uses?: boolean }) {
  return (
    <ol className="plan-steps" aria-label="Plan steps">
      {steps.map((s, i) => (
        <li key={i} className="plan-step" aria-label={`Step ${i + 1}: ${s.op}`}>
          <div className="plan-step-head">
            <span className="plan-step-n">{i + 1}</span>
            <code className="plan-step-op">{visible(s.op)}</code>
            <span className={`badge badge-${s.scope === 'write' ? 'warn' : 'neutral'}`}>{s.scope}</span>
            {uses ? <StepUse step={s} /> : null}
          </div>
          <Argv argv={s.argv} cwd={s.cwd} />
          {marks ? <span className="plan-step-mark" aria-hidden="true" {...{ [SEEN_MARK]: i }} /> : null}
        </li>
      ))}
    </ol>
  );
}

function StepUse({ step }: { step: PlanStep }) {
  if (step.request_id === null) return <span className="plan-step-use muted">not used yet</span>;
  return (
    <span className="plan-step-use">
      used by{' '}
      <a href={`#/requests/${encodeURIComponent(step.request_id)}`}>
        <code>{step.request_id}</code>
      </a>{' '}
      {step.state ? <StateBadge state={step.state} /> : null}
    </span>
  );
}
