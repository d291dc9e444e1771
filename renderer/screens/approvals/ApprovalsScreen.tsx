// Placeholder: this screen is being built.
import { Page } from '../../components/Page';

export function ApprovalsScreen({ focusId }: { focusId: string }) {
  return <Page title="Approvals"><p className="muted">Coming soon ({focusId}).</p></Page>;
}
