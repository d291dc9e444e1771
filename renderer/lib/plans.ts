// How the app tells a plan's progress. Pure: no DOM, no IPC.
import type { PlanStep } from '../../shared/protocol/types';

/** How far a plan has got: how many of its steps a request has used. */
export function stepsUsed(steps: PlanStep[]): number {
  return steps.filter((s) => s.request_id !== null).length;
}
