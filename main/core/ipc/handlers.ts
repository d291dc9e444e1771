// The handler of every IPC channel, on the Electron-free service API: they run (and are tested) in Node.
import type { ChannelName, ParsedRequestOf, ResponseOf } from '../../../shared/ipc/contract';
import type { PlanView, RequestView, StatusView } from '../../../shared/ipc/views';
import type { RunPlan } from '../allowlist/plan';
import { keyFileOf } from '../keys/keyStore';
import { approvalOf } from '../ledger/requests';
import type { HostService } from '../service';

/** What only the desktop app can do (the OS's dialogs); absent headless and in tests of the core. */
export interface AppEdges {
  pickFolder(title: string, defaultPath?: string): Promise<string | null>;
  /** Where to save a file (the OS's save dialog); null when cancelled. */
  pickSavePath(title: string, defaultName: string): Promise<string | null>;
  /**
   * A native question, answered by the person and not by the page: for calls that act at once on the
   * machine (a dry run runs a command), so a page gone wrong cannot do them by itself.
   */
  confirm(q: { title: string; message: string; detail: string; confirmLabel: string }): Promise<boolean>;
}

const planView = (p: RunPlan): PlanView => ({ argv: p.argv, cwd: p.cwd, env: p.env, timeout_s: p.timeout_s, max_output_bytes: p.max_output_bytes, approval: p.approval });

export type IpcHandlers = { [C in ChannelName]: (req: ParsedRequestOf<C>) => ResponseOf<C> | Promise<ResponseOf<C>> };

/** The status as the app shows it (what `status.get` answers, and what the tray is drawn from). */
export function statusView(svc: HostService): StatusView {
  const { daemon, ...rest } = svc.status();
  return { ...rest, daemon: { running: daemon.running, heartbeat_at: daemon.heartbeat_at } };
}

export function createIpcHandlers(svc: HostService, actor = 'app', edges: AppEdges | null = null): IpcHandlers {
  const keyResult = (key: ReturnType<HostService['createKey']>) => {
    const { secret: _secret, ...view } = key;
    return { key: { ...view, requests: 0 }, keyFile: keyFileOf(key), pasteLines: svc.pasteLines('/path/where/you/saved/the/key.json') };
  };
  return {
    'status.get': () => statusView(svc),
    'approvals.list': () => svc.pendingApprovals(),
    'approvals.approve': ({ id, forSeconds }) => {
      const r = svc.approve(id, actor, forSeconds);
      return { state: r.row.state, grant_id: r.grant?.id ?? null, also_approved: r.alsoApproved.map((x) => x.id) };
    },
    'approvals.deny': ({ id, reason }) => ({ state: svc.deny(id, actor, reason).state }),
    'grants.list': (req) => svc.listGrants(req?.all ?? false),
    'grants.revoke': ({ id }) => ({ changed: svc.revokeGrant(id, actor) }),
    'allowlist.read': () => {
      const { path, text, hash, check } = svc.readAllowlist();
      return { path, text, hash, check };
    },
    'allowlist.validate': ({ text }) => svc.validateAllowlist(text),
    'allowlist.save': ({ text, baseHash }) => svc.saveAllowlist(text, baseHash, actor),
    'allowlist.preview': ({ text, op, args }) => {
      const r = svc.previewOperation(text, op, args);
      return r.ok ? { ok: true, plan: planView(r.plan) } : r;
    },
    'allowlist.dryRun': async ({ text, op, args }) => {
      const preview = svc.previewOperation(text, op, args);
      if (!preview.ok) return preview;
      const { argv, cwd } = preview.plan;
      const yes = await edges?.confirm({
        title: 'Dry run',
        message: `Run ${op} now, on this computer?`,
        detail: `${argv.map((a) => JSON.stringify(a)).join(' ')}\nin ${cwd}\n\nIt runs once, right now, without approval.`,
        confirmLabel: 'Run it',
      });
      if (yes === false) return { ok: false, message: 'Not run: cancelled.', cancelled: true };
      const r = await svc.dryRunOperation(text, op, args, actor);
      if (!r.ok) return r;
      const { exit_code, signal, stdout, stderr, duration_ms, error } = r.run;
      return { ok: true, plan: planView(r.plan), exit_code, signal, stdout, stderr, duration_ms, error };
    },
    'catalog.get': () => svc.catalog(),
    'keys.list': () => svc.listKeys(),
    'keys.create': ({ name, scope, ops }) => keyResult(svc.createKey(name, scope, ops, actor)),
    'keys.revoke': ({ keyId }) => ({ changed: svc.revokeKey(keyId, actor) }),
    'keys.rotate': ({ keyId }) => keyResult(svc.rotateKey(keyId, actor)),
    'keys.saveFile': async ({ keyFile, fileName }) => {
      const file = await edges?.pickSavePath('Save the key file', fileName);
      if (!file) return { saved: false, path: null };
      svc.saveKeyFile(keyFile, file);
      return { saved: true, path: file };
    },
    'settings.get': () => svc.getSettings(),
    'settings.set': ({ name, value }) => svc.setSetting(name, value, actor),
    'spend.get': () => svc.status().spend,
    'audit.search': (q) => svc.searchAudit(q),
    'requests.list': (f) => svc.requests.list(f),
    'requests.output': ({ id, from }) => ({ ...svc.liveOutput(id, from), state: svc.requests.get(id)?.state ?? null }),
    'requests.get': ({ id }) => {
      const r = svc.requests.get(id);
      if (!r) return null;
      const view: RequestView = {
        id: r.id,
        key_id: r.key_id,
        op: r.op,
        args: JSON.parse(r.args_json) as Record<string, unknown>,
        intent: r.intent,
        state: r.state,
        created_at: r.created_at,
        claimed_at: r.claimed_at,
        started_at: r.started_at,
        finished_at: r.finished_at,
        duration_ms: r.duration_ms,
        exit_code: r.exit_code,
        error: r.error_code ? { code: r.error_code, message: r.error_message ?? '' } : null,
        stdout: r.stdout,
        stderr: r.stderr,
        approval: approvalOf(r),
        decided_by: r.decided_by,
        plan: r.plan_json ? (({ argv, cwd }: RunPlan) => ({ argv, cwd }))(JSON.parse(r.plan_json) as RunPlan) : null,
      };
      return view;
    },
    'requests.resolve': ({ id, outcome, note }) => ({ state: svc.resolve(id, outcome, note, actor).state }),
    'requests.cancel': ({ id }) => {
      const { changed, state, message } = svc.cancel(id, actor);
      return { changed, state, message };
    },
    'host.setPaused': ({ paused }) => ({ changed: svc.setPaused(paused, actor) }),
    'inbox.send': ({ text }) => svc.sendNotice(text, actor),
    'spool.check': ({ path }) => svc.checkSpoolFolder(path),
    'spool.use': async ({ path }) => {
      const yes = await edges?.confirm({
        title: 'Spool folder',
        message: 'Use this folder as the spool from the next start?',
        detail: `${path}\n\nDumbwaiter creates or completes it, private to you, and puts the sandbox's clients in it.`,
        confirmLabel: 'Use this folder',
      });
      return yes === false ? null : svc.useSpool(path, actor);
    },
    'dialog.pickFolder': ({ title, defaultPath }) => edges?.pickFolder(title, defaultPath) ?? null,
  };
}
