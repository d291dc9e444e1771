// The main window: the sidebar, the current screen, and the app-wide toasts and confirmation dialog.
import { useEffect, type ReactNode } from 'react';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { Toasts } from '../components/Toasts';
import { Page } from '../components/Page';
import { SpoolProblemBanner } from '../components/SpoolProblemBanner';
import { RequestDetail } from '../components/RequestDetail';
import { useRoute, type Screen } from '../stores/route';
import { startStatus, useStatusError } from '../stores/status';
import { onNavShortcut, Sidebar } from './Sidebar';
import { Welcome } from './Welcome';
import { ActivityScreen } from '../screens/activity/ActivityScreen';
import { ApprovalsScreen } from '../screens/approvals/ApprovalsScreen';
import { AllowlistScreen } from '../screens/allowlist/AllowlistScreen';
import { KeysScreen } from '../screens/keys/KeysScreen';
import { SpendScreen } from '../screens/spend/SpendScreen';
import { AuditScreen } from '../screens/audit/AuditScreen';
import { SettingsScreen } from '../screens/settings/SettingsScreen';

const SCREENS: Record<Screen, (param: string) => ReactNode> = {
  activity: () => <ActivityScreen />,
  approvals: (id) => <ApprovalsScreen focusId={id} />,
  allowlist: () => <AllowlistScreen />,
  keys: () => <KeysScreen />,
  spend: () => <SpendScreen />,
  audit: () => <AuditScreen />,
  settings: () => <SettingsScreen />,
  welcome: () => <Welcome />,
  requests: (id) => (
    <Page title="Request" description={<a href="#/activity">← Activity</a>}>
      <RequestDetail key={id} id={id} />
    </Page>
  ),
};

export function App() {
  const { screen, param } = useRoute();
  const error = useStatusError();
  useEffect(() => {
    startStatus();
    const onKey = (e: KeyboardEvent) => {
      if (onNavShortcut(e)) e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
  useEffect(() => {
    // A new screen: move focus to its content, so keyboard and screen-reader users start there.
    document.getElementById('content')?.focus({ preventScroll: true });
  }, [screen]);
  return (
    <div className="shell">
      <a className="skip-link" href="#content" onClick={(e) => (e.preventDefault(), document.getElementById('content')?.focus())}>
        Skip to content
      </a>
      <Sidebar />
      <main id="content" tabIndex={-1}>
        {error ? (
          <div className="callout callout-bad" role="alert">
            The host cannot be reached: {error}
          </div>
        ) : null}
        <SpoolProblemBanner />
        {SCREENS[screen](param)}
      </main>
      <Toasts />
      <ConfirmDialog />
    </div>
  );
}
