// Placeholder: this screen is being built.
import { Page } from '../../components/Page';

export function AllowlistScreen() {
  return <Page title="Allowlist"><p className="muted">Coming soon.</p></Page>;
}
