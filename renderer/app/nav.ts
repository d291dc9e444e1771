// The screens in the sidebar, in order; Ctrl (⌘ on macOS) with the digit opens each.
import type { Screen } from '../stores/route';

export const NAV: { screen: Screen; label: string }[] = [
  { screen: 'activity', label: 'Activity' },
  { screen: 'approvals', label: 'Approvals' },
  { screen: 'allowlist', label: 'Allowlist' },
  { screen: 'keys', label: 'Keys' },
  { screen: 'spend', label: 'Spend' },
  { screen: 'audit', label: 'Audit log' },
  { screen: 'settings', label: 'Settings' },
];
