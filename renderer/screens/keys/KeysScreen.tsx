// Placeholder: this screen is being built.
import { Page } from '../../components/Page';

export function KeysScreen() {
  return <Page title="Keys"><p className="muted">Coming soon.</p></Page>;
}
