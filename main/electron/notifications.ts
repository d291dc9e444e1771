// A native notification for each new approval request, with Approve/Deny buttons where the OS has them.
import { Notification } from 'electron';
import type { PendingApprovalView } from '../../shared/ipc/views';
import { visible } from '../../shared/text/visible';

export interface ApprovalActions {
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
  const a = p.approval;
  // The argv and the intent come from the sandbox: escaped, each part on its own line, so neither a
  // control character nor a bidi override can make the question read as something else.
  const n = new Notification({
    title: `Approve ${visible(a.operation)}?`,
    body: [`${nameSpool ? `spool ${p.spool}: ${visible(a.key_name)} wants to run ` : `${visible(a.key_name)}: `}${a.argv.map(visible).join(' ')}`, ...(a.intent ? [visible(a.intent)] : []), ...(a.ceiling ? [`Would cross ${visible(a.ceiling)}`] : []), ...(a.shared_with_sandbox?.length ? ['Works on folders the sandbox can write'] : []), ...(a.leaves_processes ? ['May leave processes running'] : [])].join('\n'),
    actions: [
      { type: 'button', text: 'Approve' },
      { type: 'button', text: 'Deny' },
    ],
    urgency: 'critical',
  });
  const done = () => shown.delete(n);
  n.on('action', (e) => (done(), e.actionIndex === 0 ? act.approve(p.id) : act.deny(p.id)));
  n.on('click', () => (done(), act.open(p.id)));
  n.on('close', done);
  n.on('failed', done);
  shown.add(n);
  n.show();
}
