// Placeholder: this screen is being built.
import { Page } from '../../components/Page';

export function SettingsScreen() {
  return <Page title="Settings"><p className="muted">Coming soon.</p></Page>;
}
