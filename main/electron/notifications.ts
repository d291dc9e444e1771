// A native notification for each new approval request. Approve is one of its buttons (where the OS has
// them) only when the whole command, folder and warnings are in its text (approvalInPlace); otherwise
// that button, like a click, opens the request's card. Deny is always there: it runs nothing.
import { Notification } from 'electron';
import type { PendingApprovalView } from '../../shared/ipc/views';
import { approvalInPlace } from '../core/app/approvalInPlace';

export interface ApprovalActions {
  /** Approves it if it still fits in place (checked again on the request as it waits now), else opens its card. */
  approve(id: string): void;
  deny(id: string): void;
  open(id: string): void;
}

// Electron keeps only a weak reference to a shown notification: one collected before the person acts
// on it loses its buttons' and click's handlers (macOS, Windows). Each is held until it is done with.
const shown = new Set<Notification>();

/** `nameSpool`: the home has several spools, so the notification says which one the request came through. */
export function notifyApproval(p: PendingApprovalView, act: ApprovalActions, nameSpool = false): void {
  if (!Notification.isSupported()) return;
  // Its texts are escaped (sandbox text, each part on its own line) and measured by approvalInPlace.
  const inPlace = approvalInPlace(p, nameSpool);
  const n = new Notification({
    ...inPlace.notification,
    actions: [
      { type: 'button', text: inPlace.fits ? 'Approve' : 'Open the card…' },
      { type: 'button', text: 'Deny' },
    ],
    urgency: 'critical',
  });
  const done = () => shown.delete(n);
  n.on('action', (e) => {
    done();
    if (e.actionIndex === 0) (inPlace.fits ? act.approve : act.open)(p.id);
    else if (e.actionIndex === 1) act.deny(p.id);
  });
  n.on('click', () => (done(), act.open(p.id)));
  n.on('close', done);
  n.on('failed', done);
  shown.add(n);
  n.show();
}
