// The sidebar: the screens (with what needs attention counted), and the host's state with pause/resume.
import { setHostPaused } from '../lib/hostPause';
import { questionOpen } from '../stores/confirm';
import { navigate, useScreen, type Screen } from '../stores/route';
import { useStatus } from '../stores/status';
import { NAV } from './nav';

const isMac = navigator.platform.startsWith('Mac');

export function Sidebar() {
  const screen = useScreen();
  const waiting = useStatus((s) => s.approvals.length) ?? 0;
  const running = useStatus((s) => s.running.length) ?? 0;
  const uncertain = useStatus((s) => s.uncertain.length) ?? 0;
  const allowlistOk = useStatus((s) => s.allowlist.ok) ?? true;
  const lastGood = useStatus((s) => s.allowlist.serving === 'last_good');
  const counts: Partial<Record<Screen, { n: number; tone: string; label: string }>> = {
    approvals: { n: waiting, tone: 'warn', label: `${waiting} waiting` },
    activity: uncertain ? { n: uncertain, tone: 'warn', label: `${uncertain} uncertain` } : { n: running, tone: 'info', label: `${running} running` },
  };
  return (
    <nav className="sidebar" aria-label="Screens">
      <div className="brand">Dumbwaiter</div>
      <ul>
        {NAV.map(({ screen: s, label }, i) => {
          const c = counts[s];
          const current = s === screen || (screen === 'requests' && s === 'activity');
          return (
            <li key={s}>
              <a href={`#/${s}`} aria-current={current ? 'page' : undefined} title={`${label} (${isMac ? '⌘' : 'Ctrl+'}${i + 1})`}>
                <span>{label}</span>
                {c && c.n > 0 ? (
                  <span className={`count count-${c.tone}`} aria-label={c.label}>
                    {c.n}
                  </span>
                ) : null}
                {s === 'allowlist' && !allowlistOk ? (
                  <span className="count count-bad" aria-label={lastGood ? 'invalid: the last good version is served' : 'invalid'}>
                    !
                  </span>
                ) : null}
              </a>
            </li>
          );
        })}
      </ul>
      <HostState />
    </nav>
  );
}

function HostState() {
  const running = useStatus((s) => s.daemon.running);
  const paused = useStatus((s) => s.paused);
  const spoolProblem = useStatus((s) => s.spool_problem);
  if (running === undefined) return null;
  const toggle = () => void setHostPaused(!paused);
  const [dot, text] = !running ? ['bad', 'Host not running'] : spoolProblem ? ['bad', 'Spool not served'] : paused ? ['warn', 'Paused'] : ['good', 'Running'];
  return (
    <div className="host-state">
      <div role="status">
        <span className={`dot dot-${dot}`} aria-hidden="true" /> {text}
      </div>
      <button type="button" onClick={toggle} aria-pressed={paused}>
        {paused ? 'Resume' : 'Pause'}
      </button>
    </div>
  );
}

/** Ctrl/⌘ + 1…7 opens a screen. */
export function onNavShortcut(e: KeyboardEvent): boolean {
  if (!(isMac ? e.metaKey : e.ctrlKey) || e.altKey || e.shiftKey) return false;
  if (questionOpen()) return false; // a question is open: answer it first
  const i = Number(e.key) - 1;
  const item = Number.isInteger(i) ? NAV[i] : undefined;
  if (!item) return false;
  navigate(item.screen);
  return true;
}
