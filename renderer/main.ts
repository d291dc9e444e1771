// The main window (a first version: the full renderer comes with the renderer work): status, the
// first-run guide, approvals, and creating a key that is shown once.
import type { StatusView } from '../shared/ipc/views';
import { byId, el } from './dom';

const api = window.dumbwaiter;

function renderStatus(s: StatusView): void {
  const box = byId('status');
  box.replaceChildren(
    el('div', `${s.daemon.running ? 'Host running' : 'Host not running'}${s.paused ? ' — paused' : ''}`),
    el('div', `Allowlist: ${s.allowlist.ok ? `${s.allowlist.operations.length} operations` : 'invalid — the last good version is in use'}`, 'muted'),
    el('div', `Running ${s.running.length} · waiting ${s.approvals.length} · queued ${s.requests.queued ?? 0} · uncertain ${s.uncertain.length}`, 'muted'),
  );
  byId('spool-path').textContent = s.spool ?? '';
  byId('allowlist-path').textContent = `${s.home}/allowlist.yaml`;
  const list = byId('approvals');
  list.replaceChildren(
    ...(s.approvals.length
      ? s.approvals.map((p) => {
          const card = el('div', undefined, 'card');
          const approve = el('button', 'Approve', 'primary');
          const deny = el('button', 'Deny', 'danger');
          approve.onclick = () => void api.approvals.approve({ id: p.id });
          deny.onclick = () => void api.approvals.deny({ id: p.id });
          card.append(el('strong', `${p.approval.operation} for ${p.approval.key_name}`), el('pre', p.approval.argv.join(' ')), el('div', p.approval.intent ?? '', 'muted'));
          const row = el('div', undefined, 'row');
          row.append(approve, deny);
          card.append(row);
          return card;
        })
      : [el('p', 'Nothing is waiting. Requests that need you appear here and in a notification.', 'muted')]),
  );
}

byId('first-run').hidden = location.hash !== '#/first-run';
void api.status.get().then(renderStatus);
api.state.onChanged(renderStatus);

byId<HTMLFormElement>('new-key').onsubmit = async (e) => {
  e.preventDefault();
  const created = await api.keys.create({ name: byId<HTMLInputElement>('key-name').value, scope: byId<HTMLInputElement>('key-write').checked ? 'write' : 'read' });
  byId('new-key-result').replaceChildren(
    el('div', `Key ${created.key.key_id} created. Copy the key file now: it is shown only once.`),
    el('pre', JSON.stringify(created.keyFile)),
    el('pre', created.pasteLines),
  );
};
