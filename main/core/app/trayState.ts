// What the tray shows, as a pure function of the core's status: which icon, the tooltip, the menu.
// The Electron layer only draws it and maps menu ids to actions.
import type { PendingApprovalView, StatusView } from '../../../shared/ipc/views';
import type { RequestState } from '../../../shared/protocol/types';
import { MENU_LABEL_MAX, approvalInPlace, approveInPlace } from './approvalInPlace';
import { capitalized, ellipsis, plural } from './words';

export type TrayIcon = 'idle' | 'running' | 'approval' | 'attention';

export interface TrayMenuItem {
  /** open, approve:<id>, card:<id>, deny:<id>, pause, resume, request:<id>, quit; empty for labels. */
  id: string;
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

const sep = (): TrayMenuItem => ({ id: '', label: '', separator: true });

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
  const deny = { id: `deny:${p.id}`, label: 'Deny' };
  if (!shown.fits) return [{ id: '', label: capitalized(shown.why), enabled: false }, { id: `card:${p.id}`, label: 'Open the card…' }, deny];
  return [...shown.menu.map((label) => ({ id: '', label, enabled: false })), sep(), { id: `approve:${p.id}`, label: 'Approve' }, deny];
}

export type TrayCommand =
  | { do: 'open' | 'pause' | 'resume' | 'quit' | 'nothing' }
  | { do: 'approve' | 'card' | 'deny' | 'request'; id: string };

/**
 * What a menu item's id asks for, decided on the status as it is now, not as the menu showed it (a menu
 * may be stale): Approve of a request that does not fit in place opens its card; an id the menu no longer
 * makes (the old approve-30m, a request decided since) does nothing.
 */
export function trayCommand(menuId: string, waiting: PendingApprovalView[]): TrayCommand {
  const [action = '', id = ''] = menuId.split(/:(.*)/s);
  switch (action) {
    case 'open':
    case 'pause':
    case 'resume':
    case 'quit':
      return { do: action };
    case 'approve': {
      const now = approveInPlace(id, waiting);
      return now === 'gone' ? { do: 'nothing' } : { do: now, id };
    }
    case 'card':
    case 'deny':
    case 'request':
      return { do: action, id };
    default:
      return { do: 'nothing' };
  }
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
    id: '',
    label: `${several ? `spool ${p.spool}: ` : ''}${p.approval.operation} for ${p.approval.key_name}${p.approval.ceiling ? ' (past a spend ceiling)' : ''}`,
    submenu: approvalSubmenu(p),
  }));
  if (waiting > MAX_APPROVALS_IN_MENU) approvals.push({ id: 'open', label: `${waiting - MAX_APPROVALS_IN_MENU} more…` });

  return {
    icon,
    tooltip,
    menu: [
      { id: 'open', label: 'Open Dumbwaiter' },
      // One readable line; the app's banner shows the whole text.
      ...(s.spool_problem ? [{ id: '', label: `Spool problem: ${ellipsis(s.spool_problem, MENU_LABEL_MAX)}`, enabled: false }] : []),
      ...(approvals.length ? [sep(), { id: '', label: `Waiting for approval (${waiting})`, enabled: false }, ...approvals] : []),
      sep(),
      s.paused ? { id: 'resume', label: 'Resume' } : { id: 'pause', label: 'Pause new runs' },
      {
        id: '',
        label: 'Recent runs',
        enabled: recent.length > 0,
        submenu: recent.slice(0, 8).map((r) => ({ id: `request:${r.id}`, label: `${s.spools.length > 1 ? `${r.spool}: ` : ''}${r.op}: ${r.state.replace('_', ' ')}` })),
      },
      sep(),
      { id: 'quit', label: 'Quit Dumbwaiter' },
    ],
  };
}
