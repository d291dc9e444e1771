// Placeholder: this screen is being built.
import { Page } from '../../components/Page';

export function ActivityScreen() {
  return <Page title="Activity"><p className="muted">Coming soon.</p></Page>;
}
