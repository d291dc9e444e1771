// The IPC contract: one map of every call the renderer may make (channel -> request schema and
// response type) and of every event main sends. Main's handlers and preload's API are derived from it.
import { z } from 'zod';
import { KEY_ID, OP_NAME, REQUEST_HANDLE, SPOOL_NAME, SPOOL_NAME_RULE } from '../protocol/ids';
import type { ProbeReport } from '../protocol/probe';
import { ARG_NAME } from '../allowlist/schema';
import { STATES, type CatalogDoc, type InboxMessage, type KeyFile, type ReconcileAttempt, type RequestState } from '../protocol/types';
import type * as V from './views';
import { RENDERER_ERROR_MAX, type ChannelName, type EventName } from './channels';

export { CHANNEL_NAMES, EVENT_NAMES, IPC_PREFIX, type ChannelName, type EventName } from './channels';

/** A channel: the schema its one argument must pass in main, and (as a type only) what it answers. */
interface Channel<S extends z.ZodType, Res> {
  request: S;
  /** Type only (boxed, so that a response that may be null stays so). */
  response?: [Res];
}
const channel =
  <Res>() =>
  <S extends z.ZodType>(request: S): Channel<S, Res> => ({ request });

const none = z.undefined();
const requestId = z.string().regex(REQUEST_HANDLE); // the host's handle: the app names requests as the host does
const keyId = z.string().regex(KEY_ID);
const opName = z.string().regex(OP_NAME);
const argName = z.string().regex(ARG_NAME);
const isoTime = z.iso.datetime({ offset: true });
const folder = z.string().min(1).max(4096);
/** A folder given in full (POSIX or Windows): a relative one would depend on main's working folder. */
const absFolder = folder.refine((p) => /^(\/|[A-Za-z]:[\\/]|\\\\)/.test(p), 'a folder must be an absolute path');
const spoolName = z.string().regex(SPOOL_NAME, `a spool name is ${SPOOL_NAME_RULE}`);
/** An operation tried from the editor: the editor's text (maybe unsaved) and sample arguments. */
const tryOut = z.strictObject({ text: z.string().max(1_000_000), op: opName, args: z.record(z.string(), z.unknown()) });

/** A key just made: shown once. */
type NewKey = { key: V.KeyView; keyFile: KeyFile; pasteLines: string };

export const ipcContract = {
  'status.get': channel<V.StatusView>()(none),
  'approvals.list': channel<V.PendingApprovalView[]>()(none),
  'approvals.approve': channel<{ state: RequestState; grant_id: string | null; also_approved: string[] }>()(
    z.strictObject({
      id: requestId,
      forSeconds: z.number().int().min(1).max(86400).optional(),
      // With forSeconds: the arguments the grant lets vary (any value, or a pattern); the rest must equal the card's.
      widen: z.record(argName, z.union([z.strictObject({ any: z.literal(true) }), z.strictObject({ match: z.string().min(1).max(1000) })])).optional(),
    }),
  ),
  'approvals.deny': channel<{ state: RequestState }>()(z.strictObject({ id: requestId, reason: z.string().max(2000).default('') })),
  'grants.list': channel<V.GrantView[]>()(z.strictObject({ all: z.boolean().default(false) }).optional()),
  'grants.revoke': channel<{ changed: boolean }>()(z.strictObject({ id: z.string().regex(/^g_[A-Za-z0-9_-]{1,32}$/) })),
  'allowlist.read': channel<V.AllowlistView>()(none),
  'allowlist.validate': channel<V.AllowlistCheck>()(z.strictObject({ text: z.string().max(1_000_000) })),
  'allowlist.save': channel<V.AllowlistSaved>()(z.strictObject({ text: z.string().max(1_000_000), baseHash: z.string().regex(/^[0-9a-f]{64}$/) })),
  'allowlist.preview': channel<V.PreviewView>()(tryOut),
  'allowlist.dryRun': channel<V.DryRunView>()(tryOut),
  /** Runs the operation's reconcile command once (after the person confirms natively), with a stand-in request id. */
  'allowlist.dryRunReconcile': channel<V.ReconcileDryRunView>()(tryOut),
  'catalog.get': channel<CatalogDoc | null>()(none),
  'keys.list': channel<V.KeyView[]>()(none),
  /** keys.create and keys.rotate: null when the person said no to the native question. */
  'keys.create': channel<NewKey | null>()(
    z.strictObject({
      name: z.string().min(1).max(100),
      scope: z.enum(['read', 'write']),
      ops: z.array(z.string().regex(OP_NAME)).max(256).nullable().default(null),
      /** The spool whose requests it signs (absent: the home's default spool). */
      spool: spoolName.optional(),
    }),
  ),
  'keys.revoke': channel<{ changed: boolean }>()(z.strictObject({ keyId })),
  'keys.rotate': channel<NewKey | null>()(z.strictObject({ keyId })),
  /** Saves a new key's file where the user chooses (the OS's save dialog), readable by the user only. */
  'keys.saveFile': channel<{ saved: boolean; path: string | null }>()(
    z.strictObject({
      keyFile: z.strictObject({ v: z.literal(1), key_id: z.string().regex(KEY_ID), secret: z.string().min(16).max(256) }),
      fileName: z.string().regex(/^[A-Za-z0-9._ -]{1,100}\.json$/),
    }),
  ),
  'settings.get': channel<V.SettingsView>()(none),
  'settings.set': channel<V.SettingsView>()(z.strictObject({ name: z.string().min(1).max(64), value: z.unknown() })),
  'spend.get': channel<V.SpendView[]>()(none),
  'audit.search': channel<V.AuditView[]>()(
    z
      .strictObject({
        text: z.string().max(500).optional(),
        kind: z.string().max(64).optional(),
        requestId: requestId.optional(),
        limit: z.number().int().min(1).max(1000).optional(),
        before: z.number().int().min(1).optional(),
        op: opName.optional(),
        keyId: keyId.optional(),
        state: z.enum(STATES).optional(),
        since: isoTime.optional(),
        until: isoTime.optional(),
        spool: spoolName.optional(),
      })
      .default({}),
  ),
  'requests.list': channel<V.RequestSummaryView[]>()(
    z
      .strictObject({
        states: z.array(z.enum(STATES)).max(STATES.length).optional(),
        keyId: keyId.optional(),
        op: opName.optional(),
        limit: z.number().int().min(1).max(1000).optional(),
        before: z.number().int().min(1).optional(),
        spool: spoolName.optional(),
      })
      .default({}),
  ),
  'requests.output': channel<V.LiveOutputView>()(z.strictObject({ id: requestId, from: z.number().int().min(0).default(0) })),
  'requests.get': channel<V.RequestView | null>()(z.strictObject({ id: requestId })),
  'requests.resolve': channel<{ state: RequestState }>()(
    z.strictObject({ id: requestId, outcome: z.enum(['succeeded', 'failed']), note: z.string().max(2000).default('') }),
  ),
  'requests.cancel': channel<{ changed: boolean; state: RequestState; message: string }>()(z.strictObject({ id: requestId })),
  /** Runs an uncertain request's reconcile command now; the request moves as its verdict says. */
  'requests.checkReconcile': channel<{ state: RequestState; reconcile: ReconcileAttempt | null }>()(z.strictObject({ id: requestId })),
  'host.setPaused': channel<{ changed: boolean }>()(z.strictObject({ paused: z.boolean() })),
  /** One copy per active key of the spool (absent: the default spool), each signed for it. */
  'inbox.send': channel<InboxMessage[]>()(z.strictObject({ text: z.string().min(1).max(4000), spool: spoolName.optional() })),
  'spools.list': channel<V.SpoolInfo[]>()(none),
  /** Adds a spool (the folder created, or completed if empty, private to you) once the person confirms
   *  natively; null: they did not. The running host serves it at once. */
  'spools.add': channel<V.SpoolInfo | null>()(z.strictObject({ name: spoolName, dir: absFolder })),
  /** Stops serving a spool (refused while it has open requests); its folder is left as it is. Null: not confirmed. */
  'spools.remove': channel<{ name: string; dir: string; keys: number } | null>()(z.strictObject({ name: spoolName })),
  /** Probes a spool's mount now (what the filesystem does), kept as its latest probe. */
  'spools.check': channel<ProbeReport>()(z.strictObject({ name: spoolName })),
  /** The OS's folder picker (the desktop app only; null when cancelled or where there is none). */
  'dialog.pickFolder': channel<string | null>()(z.strictObject({ title: z.string().max(200), defaultPath: folder.optional() })),
  /** Opens the app's logs folder in the OS's file manager (main knows where: the page names nothing). */
  'app.openLogs': channel<null>()(none),
  /** An error the page did not catch, or a promise it left rejected, for the app's log. The page may be
   *  compromised: what it sends is bounded here and escaped when logged, and its rate is limited. */
  'app.reportError': channel<null>()(
    z.strictObject({
      kind: z.enum(['error', 'unhandledrejection']),
      message: z.string().max(RENDERER_ERROR_MAX.message),
      stack: z.string().max(RENDERER_ERROR_MAX.stack).default(''),
    }),
  ),
} as const satisfies Record<ChannelName, Channel<z.ZodType, unknown>>;

/** Events main sends to the renderer: the payload type of each. */
export interface IpcEvents extends Record<EventName, unknown> {
  'state.changed': V.StatusView;
  'approval.requested': V.PendingApprovalView;
  'run.finished': { id: string; op: string; spool: string; state: RequestState };
  /** The tray or a notification asks the open window to show a route (it may first ask to leave). */
  'app.navigate': { route: string };
}

export type IpcContract = typeof ipcContract;
export type RequestOf<C extends ChannelName> = z.input<IpcContract[C]['request']>;
export type ParsedRequestOf<C extends ChannelName> = z.output<IpcContract[C]['request']>;
export type ResponseOf<C extends ChannelName> = NonNullable<IpcContract[C]['response']>[0];

// Every channel name has a schema and every schema a name: the two lists can never drift apart.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _covers: Same<keyof IpcContract, ChannelName> = true;
void _covers;
