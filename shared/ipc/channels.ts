// The names on the IPC wire, without their schemas: all that the sandboxed preload needs to build its
// API (the schemas and their validation live in main). contract.ts checks it covers exactly these.
export const CHANNEL_NAMES = [
  'status.get',
  'approvals.list',
  'approvals.approve',
  'approvals.deny',
  'grants.list',
  'grants.revoke',
  'allowlist.read',
  'allowlist.validate',
  'allowlist.save',
  'allowlist.preview',
  'allowlist.dryRun',
  'allowlist.dryRunReconcile',
  'catalog.get',
  'keys.list',
  'keys.create',
  'keys.revoke',
  'keys.rotate',
  'keys.saveFile',
  'settings.get',
  'settings.set',
  'spend.get',
  'audit.search',
  'requests.list',
  'requests.get',
  'requests.output',
  'requests.resolve',
  'requests.cancel',
  'requests.checkReconcile',
  'host.setPaused',
  'inbox.send',
  'spools.list',
  'spools.add',
  'spools.remove',
  'spools.check',
  'dialog.pickFolder',
  'app.openLogs',
  'app.reportError',
] as const;

export const EVENT_NAMES = ['state.changed', 'approval.requested', 'run.finished', 'app.navigate'] as const;

/** Prefix of every channel on the wire, so nothing else on ipcMain can be reached by name. */
export const IPC_PREFIX = 'dumbwaiter:';

export type ChannelName = (typeof CHANNEL_NAMES)[number];
export type EventName = (typeof EVENT_NAMES)[number];

/** The wire name of an event the main process sends (and the preload subscribes to). */
export function eventChannel(e: EventName): string {
  return `${IPC_PREFIX}event:${e}`;
}

/** How much of a page's uncaught error the log takes (app.reportError): the page clips to these, main
 *  refuses longer. Here, not in contract.ts, so that the page can read them without the schemas. */
export const RENDERER_ERROR_MAX = { message: 2000, stack: 8000 } as const;

/** The approval window (approval.html) decides one request at a time: it may call these and no more. */
export const APPROVAL_WINDOW_CHANNELS: readonly ChannelName[] = ['status.get', 'approvals.list', 'approvals.approve', 'approvals.deny', 'requests.get', 'app.reportError'];
