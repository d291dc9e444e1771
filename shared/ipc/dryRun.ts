// The editor's dry run of a reconcile command, as host and app both name it.

/** The request id a reconcile command is tried with from the editor (its {request_id} and the run's
 *  DUMBWAITER_REQUEST_ID): a stand-in, no request is asked about. */
export const DRY_RUN_REQUEST_ID = 'dry-run';
