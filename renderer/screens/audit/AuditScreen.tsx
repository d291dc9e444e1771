// Placeholder: this screen is being built.
import { Page } from '../../components/Page';

export function AuditScreen() {
  return <Page title="Audit"><p className="muted">Coming soon.</p></Page>;
}
