// The small approval window: the request in full, and keyboard-driven decisions.
import { byId, el } from './dom';

const api = window.dumbwaiter;
const id = decodeURIComponent(location.hash.slice(1));

async function show(): Promise<void> {
  const pending = (await api.approvals.list()).find((p) => p.id === id);
  const box = byId('request');
  if (!pending) {
    box.replaceChildren(el('p', 'This request is no longer waiting for approval.'));
    return;
  }
  const a = pending.approval;
  box.replaceChildren(
    el('h1', `${a.operation}?`),
    el('div', `Key: ${a.key_name} (${a.key_id})`, 'muted'),
    el('pre', JSON.stringify(a.argv)),
    el('div', `in ${a.cwd}`, 'muted'),
    ...(a.intent ? [el('p', a.intent)] : []),
    ...(a.ceiling ? [el('p', `Would cross ${a.ceiling}`)] : []),
    el('div', `Denied automatically at ${new Date(a.timeout_at).toLocaleTimeString()} if nobody decides.`, 'muted'),
  );
}

async function decide(how: 'approve' | 'approve30' | 'deny'): Promise<void> {
  if (how === 'deny') await api.approvals.deny({ id, reason: byId<HTMLInputElement>('reason').value });
  else await api.approvals.approve({ id, ...(how === 'approve30' ? { forSeconds: 1800 } : {}) });
  window.close();
}

byId('approve').onclick = () => void decide('approve');
byId('approve-30').onclick = () => void decide('approve30');
byId('deny').onclick = () => void decide('deny');
document.addEventListener('keydown', (e) => {
  if (e.target instanceof HTMLInputElement && e.key !== 'Escape' && e.key !== 'Enter') return;
  if (e.key === 'Enter' && !(e.target instanceof HTMLInputElement)) void decide('approve');
  else if (e.key === 'Enter') void decide('deny');
  else if (e.key.toLowerCase() === 't') void decide('approve30');
  else if (e.key.toLowerCase() === 'd') byId('reason').focus();
  else if (e.key === 'Escape') window.close();
});
void show();
api.state.onChanged(() => void show());
