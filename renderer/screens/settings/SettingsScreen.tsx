// The host's settings: the spools (one folder per sandbox), approvals and runs, retention, the desktop app; and a box
// to write a message into the sandbox's inbox. What is shown follows the host (stores/settings.ts),
// without touching a value being typed.
import type { SettingsView } from '../../../shared/ipc/views';
import { api, errorText } from '../../api';
import { Page } from '../../components/Page';
import { settingError } from '../../lib/settingError';
import { saveSetting, useSettings, useSettingsError } from '../../stores/settings';
import { toast } from '../../stores/toasts';
import { InboxSection } from './InboxSection';
import { NumberSetting, SwitchSetting } from './SettingControls';
import { SpoolsSection } from './SpoolsSection';
import './settings.css';

const DAY_S = 86400;

const round = (n: number, digits = 2) => Number(n.toFixed(digits));

export function SettingsScreen() {
  const s = useSettings();
  const error = useSettingsError();

  const set = async <K extends keyof SettingsView>(name: K, value: SettingsView[K], what: string): Promise<string | null> => {
    try {
      await saveSetting(name, value);
      toast(`${what} saved`);
      return null;
    } catch (e) {
      return settingError(e);
    }
  };

  return (
    <Page title="Settings" description="How the host works. Changes are saved to settings.json in Dumbwaiter's home and the host picks them up within a moment.">
      {error ? (
        <div className="callout callout-bad" role="alert">
          Could not load the settings: {error}
        </div>
      ) : null}
      {!s ? (
        error ? null : <p className="muted">Loading…</p>
      ) : (
        <>
          <SpoolsSection />

          <section className="card settings-section" aria-labelledby="runs-title">
            <h2 id="runs-title">Approvals and runs</h2>
            <NumberSetting
              label="Approval timeout"
              unit="minutes"
              hint="A request waiting for your decision longer than this is denied."
              value={round(s.approval_timeout_s / 60)}
              check={(m) => (m < 1 ? 'At least 1 minute.' : m > 30 * 24 * 60 ? 'At most 30 days (43200 minutes).' : null)}
              save={(m) => set('approval_timeout_s', Math.round(m * 60), 'Approval timeout')}
            />
            <NumberSetting
              label="Runs at once"
              unit="at most"
              step={1}
              hint="How many requests run at the same time, across all operations (each operation may limit itself further)."
              value={s.max_concurrent_runs}
              check={(n) => (!Number.isInteger(n) ? 'A whole number.' : n < 1 || n > 64 ? 'From 1 to 64.' : null)}
              save={(n) => set('max_concurrent_runs', n, 'Runs at once')}
            />
            <SwitchSetting
              label="Leave runs running when Dumbwaiter stops"
              hint={`On: runs still going when the host stops go on, and are recorded when it starts again. Off: they get ${s.shutdown_grace_s} s to finish, then are ended and recorded as uncertain. Quitting the app with runs going asks, with this as its default answer.`}
              value={s.runs_on_stop === 'leave'}
              save={(v) => set('runs_on_stop', v ? 'leave' : 'stop', 'Leaving runs running')}
            />
          </section>

          <section className="card settings-section" aria-labelledby="retention-title">
            <h2 id="retention-title">Retention</h2>
            <NumberSetting
              label="Keep files in the spool"
              unit="days"
              hint="Finished results, logs and inbox messages leave the spool after this long."
              value={s.retention_spool_days}
              check={(d) => (d < 0.01 ? 'At least 0.01 days (about 15 minutes).' : d > 3650 ? 'At most 3650 days.' : null)}
              save={(d) => set('retention_spool_days', d, 'Spool retention')}
            />
            <NumberSetting
              label="Keep history in the ledger"
              unit="days"
              hint="Finished requests and audit entries leave the ledger after this long."
              value={s.retention_ledger_days}
              check={(d) => {
                if (d > 36500) return 'At most 36500 days.';
                const need = Math.max(1, (s.max_request_age_s + DAY_S) / DAY_S, ...s.ceilings.map((c) => c.window_s / DAY_S));
                if (d < need) {
                  const ceiling = s.ceilings.find((c) => c.window_s / DAY_S > (s.max_request_age_s + DAY_S) / DAY_S && c.window_s / DAY_S >= need);
                  return ceiling
                    ? `At least ${round(need)} days: spend ceiling “${ceiling.name}” counts runs over that long.`
                    : `At least ${round(need)} days: the ledger must cover the maximum request age plus one day, so a request id is never reused.`;
                }
                return null;
              }}
              save={(d) => set('retention_ledger_days', d, 'Ledger retention')}
            />
          </section>

          <section className="card settings-section" aria-labelledby="desktop-title">
            <h2 id="desktop-title">Desktop</h2>
            <SwitchSetting
              label="Notify me when a request needs approval"
              hint="A system notification for each request that waits for you."
              value={s.notifications}
              save={(v) => set('notifications', v, 'Notifications')}
            />
            <SwitchSetting
              label="Start Dumbwaiter at login"
              hint="So requests are handled without opening the app first."
              value={s.start_at_login}
              save={(v) => set('start_at_login', v, 'Start at login')}
            />
            <div className="settings-logs">
              <p className="muted" id="logs-hint">
                The app's log: what the host did and any error the app met. Useful when something went wrong.
              </p>
              <button type="button" aria-describedby="logs-hint" onClick={() => void api.app.openLogs().catch((e: unknown) => toast(errorText(e), 'error'))}>
                Open logs
              </button>
            </div>
          </section>

          <InboxSection />
        </>
      )}
    </Page>
  );
}
