// Cancelling a request, the one way every screen does it: asked first, then said what happened.
import { api, errorText } from '../api';
import { confirmAction } from '../stores/confirm';
import { toast } from '../stores/toasts';

/** Returns whether the host changed anything. `orphaned`: a run that outlived a host restart (Kill). */
export async function cancelRequest(r: { id: string; op: string; state: string; orphaned?: boolean }): Promise<boolean> {
  const running = r.state === 'running';
  const ok = await confirmAction(
    r.orphaned
      ? {
          title: `Kill ${r.op}?`,
          body: `Request ${r.id} outlived a host restart and is still running: every process it started is killed. What it already did stays done.`,
          confirmLabel: 'Kill it',
          danger: true,
        }
      : {
          title: running ? `Stop ${r.op}?` : `Cancel ${r.op}?`,
          body: running
            ? `Request ${r.id} is running: its whole process tree is terminated. What it already did stays done.`
            : `Request ${r.id} will not run. The agent sees it as cancelled.`,
          confirmLabel: running ? 'Stop it' : 'Cancel request',
          danger: true,
        },
  );
  if (!ok) return false;
  try {
    const out = await api.requests.cancel({ id: r.id });
    toast(out.message);
    return out.changed;
  } catch (e) {
    toast(errorText(e), 'error');
    return false;
  }
}
