// A native notification for each new approval request, with Approve/Deny buttons where the OS has them.
import { Notification } from 'electron';
import type { PendingApprovalView } from '../../shared/ipc/views';

export interface ApprovalActions {
  approve(id: string): void;
  deny(id: string): void;
  open(id: string): void;
}

export function notifyApproval(p: PendingApprovalView, act: ApprovalActions): void {
  if (!Notification.isSupported()) return;
  const a = p.approval;
  const n = new Notification({
    title: `Approve ${a.operation}?`,
    body: `${a.key_name}: ${a.argv.join(' ')}${a.intent ? `\n${a.intent}` : ''}${a.ceiling ? `\nWould cross ${a.ceiling}` : ''}`,
    actions: [
      { type: 'button', text: 'Approve' },
      { type: 'button', text: 'Deny' },
    ],
    urgency: 'critical',
  });
  n.on('action', (_e, index) => (index === 0 ? act.approve(p.id) : act.deny(p.id)));
  n.on('click', () => act.open(p.id));
  n.show();
}
