// A plan's steps, every one in full: its operation and scope, and the exact command and folder it runs;
// on an approval card also each step's environment, limits and warnings (`runs`, host-side), and, with
// `mustSee`, each step is a part useAllSeen watches (the card arms only once all were on screen in full).
// On a decided plan, the request that used each step and that request's state.
import type { HostRunView } from '../../shared/ipc/views';
import type { PlanStep } from '../../shared/protocol/types';
import { visible } from '../../shared/text/visible';
import { MUST_SEE } from '../lib/useAllSeen';
import { Argv } from './Argv';
import { LeavesWarning, RunFacts } from './RunFacts';
import { StateBadge } from './StateBadge';

/** The useAllSeen name of step `i` (from 0). */
export const stepPart = (i: number): string => `step-${i + 1}`;

export function PlanSteps({ steps, runs = null, mustSee = false, uses = false }: { steps: PlanStep[]; runs?: HostRunView[] | null; mustSee?: boolean; uses?: boolean }) {
  return (
    <ol className="plan-steps" aria-label="Plan steps">
      {steps.map((s, i) => {
        const run = runs?.[i];
        return (
          <li key={i} className="plan-step" aria-label={`Step ${i + 1}: ${visible(s.op)}`} {...(mustSee ? { [MUST_SEE]: stepPart(i) } : {})}>
            <div className="plan-step-head">
              <span className="plan-step-n">{i + 1}</span>
              <code className="plan-step-op">{visible(s.op)}</code>
              <span className={`badge badge-${s.scope === 'write' ? 'warn' : 'neutral'}`}>{s.scope}</span>
              {uses ? <StepUse step={s} /> : null}
            </div>
            <Argv argv={s.argv} cwd={s.cwd} />
            {run ? <RunFacts run={run} /> : null}
            {run?.leaves_processes ? <LeavesWarning /> : null}
          </li>
        );
      })}
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
