// Who let a request run, typed: a person (or the host on their behalf), a time-boxed grant, or an
// approved plan whose step it is. Kept in columns of its own (approved_by_actor, approved_by_grant,
// approved_by_plan), which whatever needs it reads; `decided_by` is only the display text made from it
// here (the result's approval, the app), and is never read back.
import type { RequestRow } from './requests';

export type ApprovedBy = { actor: string } | { grant: string } | { plan: string };

/** The columns a request's approval is recorded in (all null: not approved, or sent back to a human). */
export type ApprovedByFields = Pick<RequestRow, 'approved_by_actor' | 'approved_by_grant' | 'approved_by_plan' | 'decided_by'>;

/** How the approval reads on screen and in the result ("grant g_…", "plan <id>", or the actor). */
export function approvedByText(by: ApprovedBy): string {
  if ('grant' in by) return `grant ${by.grant}`;
  if ('plan' in by) return `plan ${by.plan}`;
  return by.actor;
}

/** The columns of approval `by` (null: none, as when a request goes back to a human). */
export function approvedByFields(by: ApprovedBy | null): ApprovedByFields {
  return {
    approved_by_actor: by && 'actor' in by ? by.actor : null,
    approved_by_grant: by && 'grant' in by ? by.grant : null,
    approved_by_plan: by && 'plan' in by ? by.plan : null,
    decided_by: by ? approvedByText(by) : null,
  };
}

/** Who approved `row`, from its columns; null when nobody did (yet). */
export function approvedByOf(row: Pick<RequestRow, 'approved_by_actor' | 'approved_by_grant' | 'approved_by_plan'>): ApprovedBy | null {
  if (row.approved_by_grant !== null) return { grant: row.approved_by_grant };
  if (row.approved_by_plan !== null) return { plan: row.approved_by_plan };
  if (row.approved_by_actor !== null) return { actor: row.approved_by_actor };
  return null;
}
