// A request's state as a coloured label.
import type { RequestState } from '../../shared/protocol/types';

const LABELS: Record<RequestState, string> = {
  queued: 'Queued',
  awaiting_approval: 'Awaiting approval',
  running: 'Running',
  succeeded: 'Succeeded',
  failed: 'Failed',
  rejected: 'Rejected',
  denied: 'Denied',
  expired: 'Expired',
  cancelled: 'Cancelled',
  uncertain: 'Uncertain',
};

const TONES: Record<RequestState, string> = {
  queued: 'neutral',
  awaiting_approval: 'warn',
  running: 'info',
  succeeded: 'good',
  failed: 'bad',
  rejected: 'bad',
  denied: 'bad',
  expired: 'neutral',
  cancelled: 'neutral',
  uncertain: 'warn',
};

export function StateBadge({ state }: { state: RequestState }) {
  return <span className={`badge badge-${TONES[state]}`} data-state={state}>{LABELS[state]}</span>;
}

export const stateLabel = (s: RequestState): string => LABELS[s];
