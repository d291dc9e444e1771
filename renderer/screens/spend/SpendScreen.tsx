// Placeholder: this screen is being built.
import { Page } from '../../components/Page';

export function SpendScreen() {
  return <Page title="Spend"><p className="muted">Coming soon.</p></Page>;
}
