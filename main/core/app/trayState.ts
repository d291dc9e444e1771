// What the tray shows, as a pure function of the core's status: which icon, the tooltip, the menu.
// The Electron layer only draws it and hands each chosen item's action back to be decided.
import type { PendingApprovalView, StatusView } from '../../../shared/ipc/views';
import type { RequestState } from '../../../shared/protocol/types';
import { MENU_LABEL_MAX, approvalInPlace, approveInPlace } from './approvalInPlace';
import { capitalized, ellipsis, plural } from './words';

export type TrayIcon = 'idle' | 'running' | 'approval' | 'attention';

/** What a menu item asks for, carried by the item itself (absent on labels and submenus). */
export type TrayAction =
  | { do: 'open' | 'pause' | 'resume' | 'logs' | 'quit' }
  | { do: 'approve' | 'card' | 'deny' | 'request'; id: string };

export interface TrayMenuItem {
  action?: TrayAction;
  label: string;
  enabled?: boolean;
  separator?: boolean;
  submenu?: TrayMenuItem[];
}

export interface TrayState {
  icon: TrayIcon;
  tooltip: string;
  menu: TrayMenuItem[];
}

export interface RecentRun {
  id: string;
  op: string;
  spool: string;
  state: RequestState;
}

const MAX_APPROVALS_IN_MENU = 5;
const MAX_RECENT = 8;

/** The tray's recent runs after these ended (oldest first, as reported): newest first, each request
 *  once, with its latest state (a run settled by a human after a crash moves up with its verdict). */
export function addRecentRuns(recent: RecentRun[], ended: RecentRun[]): RecentRun[] {
  const newest = [...ended].reverse();
  return [...newest, ...recent].filter((r, i, all) => all.findIndex((x) => x.id === r.id) === i).slice(0, MAX_RECENT);
}

const sep = (): TrayMenuItem => ({ label: '', separator: true });

/** Problems a human must look at, most important first. */
export function attentionReasons(s: StatusView): string[] {
  const out: string[] = [];
  if (!s.daemon.running) out.push('the host is not running');
  const troubled = s.spools.length > 1 ? s.spools.filter((x) => x.problem).map((x) => x.name) : [];
  if (s.spool_problem) out.push(troubled.length ? `spool${troubled.length > 1 ? 's' : ''} ${troubled.join(', ')} need${troubled.length > 1 ? '' : 's'} attention` : 'the spool needs attention');
  if (s.uncertain.length) out.push(`${plural(s.uncertain.length, 'uncertain run')} to resolve`);
  if (!s.allowlist.ok) out.push(s.allowlist.serving === 'last_good' ? 'the allowlist is invalid (its last good version is served)' : 'the allowlist is invalid');
  if (s.paused) out.push('paused');
  return out;
}

/**
 * A waiting request's entry: its whole command, folder and warnings, then Approve, when they fit
 * (approvalInPlace); otherwise why not, and its card. Approving for a while is never here: it goes
 * through the card and its native question, which show what the grant covers.
 */
function approvalSubmenu(p: PendingApprovalView): TrayMenuItem[] {
  const shown = approvalInPlace(p);
  const deny: TrayMenuItem = { action: { do: 'deny', id: p.id }, label: 'Deny' };
  if (!shown.fits) return [{ label: capitalized(shown.why), enabled: false }, { action: { do: 'card', id: p.id }, label: 'Open the card…' }, deny];
  return [...shown.menu.map((label) => ({ label, enabled: false })), sep(), { action: { do: 'approve', id: p.id }, label: 'Approve' }, deny];
}

export type TrayCommand = TrayAction | { do: 'nothing' };

/**
 * What a chosen item's action comes to, decided on the requests waiting now, not as the menu showed
 * them (a menu may be stale): Approve of a request that no longer fits in place opens its card, and
 * Approve of a request decided since does nothing. Every other action is done as it is.
 */
export function trayCommand(action: TrayAction, waiting: PendingApprovalView[]): TrayCommand {
  if (action.do !== 'approve') return action;
  const now = approveInPlace(action.id, waiting);
  return now === 'gone' ? { do: 'nothing' } : { do: now, id: action.id };
}

export function trayState(s: StatusView, recent: RecentRun[] = []): TrayState {
  const attention = attentionReasons(s);
  const waiting = s.approvals.length;
  const running = s.running.length;
  const queued = s.requests.queued ?? 0;
  const icon: TrayIcon = attention.length ? 'attention' : waiting ? 'approval' : running ? 'running' : 'idle';

  const counts = [
    running ? `${running} running` : null,
    waiting ? `${waiting} waiting for approval` : null,
    queued ? `${queued} queued` : null,
  ].filter(Boolean);
  const tooltip = `Dumbwaiter: ${[...attention, ...counts].join(', ') || 'idle'}`;

  // Counts are totals across the home's spools; with several, each approval names its spool.
  const several = s.spools.length > 1;
  const approvals: TrayMenuItem[] = s.approvals.slice(0, MAX_APPROVALS_IN_MENU).map((p) => ({
    label: `${several ? `spool ${p.spool}: ` : ''}${p.approval.operation} for ${p.approval.key_name}${p.approval.ceiling ? ' (past a spend ceiling)' : ''}`,
    submenu: approvalSubmenu(p),
  }));
  if (waiting > MAX_APPROVALS_IN_MENU) approvals.push({ action: { do: 'open' }, label: `${waiting - MAX_APPROVALS_IN_MENU} more…` });

  return {
    icon,
    tooltip,
    menu: [
      { action: { do: 'open' }, label: 'Open Dumbwaiter' },
      // One readable line; the app's banner shows the whole text.
      ...(s.spool_problem ? [{ label: `Spool problem: ${ellipsis(s.spool_problem, MENU_LABEL_MAX)}`, enabled: false }] : []),
      ...(approvals.length ? [sep(), { label: `Waiting for approval (${waiting})`, enabled: false }, ...approvals] : []),
      sep(),
      s.paused ? { action: { do: 'resume' }, label: 'Resume' } : { action: { do: 'pause' }, label: 'Pause new runs' },
      {
        label: 'Recent runs',
        enabled: recent.length > 0,
        submenu: recent.slice(0, 8).map((r): TrayMenuItem => ({ action: { do: 'request', id: r.id }, label: `${s.spools.length > 1 ? `${r.spool}: ` : ''}${r.op}: ${r.state.replace('_', ' ')}` })),
      },
      sep(),
      { action: { do: 'logs' }, label: 'Open logs' },
      { action: { do: 'quit' }, label: 'Quit Dumbwaiter' },
    ],
  };
}
