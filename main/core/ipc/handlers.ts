// The handler of every IPC channel, on the Electron-free host (host/: one module per concern, the calls
// the command line makes too): they run (and are tested) in Node.
import type { ChannelName, ParsedRequestOf, ResponseOf } from '../../../shared/ipc/contract';
import type { PlanView, RequestView } from '../../../shared/ipc/views';
import type { RunPlan } from '../allowlist/plan';
import { DRY_RUN_REQUEST_ID, type DryRunResult } from '../allowlist/tryOut';
import { keyFileOf, type KeyWithSecret } from '../keys/keyStore';
import { approvalOf, planOf, reconcileOf } from '../ledger/requests';
import { planDocOf } from '../policy/plans';
import type { Host } from '../host/host';
import { LOOSENS, loosenedCeilings, loosens, withSetting, type Settings } from '../settings';
import { UserError } from '../errors';
import { scopedLogger } from '../log';
import { allowlistChanges, describeChanges, widensWhatRuns } from './allowlistChanges';
import { describeRun } from '../../../shared/allowlist/describe';
import { visible, visibleJson } from '../../../shared/text/visible';
import { forAWhileQuestion } from './forAWhileQuestion';

/** What only the desktop app can do (the OS's dialogs); absent headless and in tests of the core. */
export interface AppEdges {
  pickFolder(title: string, defaultPath?: string): Promise<string | null>;
  /** Where to save a file (the OS's save dialog); null when cancelled. */
  pickSavePath(title: string, defaultName: string): Promise<string | null>;
  /**
   * A native question, answered by the person and not by the page: for every call that changes what
   * runs (the allowlist, a dry run, a grant, a loosened ceiling), who may call (keys) or where the
   * spool lives, so that a page gone wrong cannot do any of them by itself.
   */
  confirm(q: { title: string; message: string; detail: string; confirmLabel: string }): Promise<boolean>;
  /** Opens the app's logs folder in the OS's file manager; the OS's error text when it could not. */
  openLogs?(): Promise<string | null>;
}

const planView = (p: RunPlan): PlanView => ({ argv: p.argv, cwd: p.cwd, env: p.env, timeout_s: p.timeout_s, max_output_bytes: p.max_output_bytes, approval: p.approval });

/** A dry run that ran: what ran, and how it ended. */
function ranView({ plan, run }: Extract<DryRunResult, { ok: true }>) {
  const { exit_code, signal, stdout, stderr, duration_ms, error } = run;
  return { ok: true as const, plan: planView(plan), exit_code, signal, stdout, stderr, duration_ms, error };
}

export type IpcHandlers = { [C in ChannelName]: (req: ParsedRequestOf<C>) => ResponseOf<C> | Promise<ResponseOf<C>> };

type Question = Parameters<AppEdges['confirm']>[0];

/** Why a call that needs the person's native answer is refused where there is no one to ask. */
export const NO_QUESTION = 'refused: this needs a confirmation in a dialog of the desktop app, and none can be shown here';

/** What a key may call, as the key questions say it. */
function keyPowers(scope: string, ops: string[] | null, spoolDir: string): string {
  return `Whoever holds its key file may call ${ops ? `these operations: ${visible(ops.join(', '))}` : `every operation of scope ${scope === 'write' ? 'read or write' : 'read'}`} (those that ask for approval still ask), through the spool at ${visible(spoolDir)} only.`;
}

/** A page's uncaught errors are logged at most this many per minute: a page gone wrong (or made to go
 *  wrong) cannot fill the log and rotate the host's own lines out of it. */
export const RENDERER_ERRORS_PER_MINUTE = 20;

/** A setting's value as a question shows it. */
const settingText = (v: unknown) => visibleJson(JSON.stringify(v));

export function createIpcHandlers(host: Host, actor = 'app', edges: AppEdges | null = null): IpcHandlers {
  /** The person's answer; with no desktop edge (headless, or a wiring bug) the call fails closed. */
  const confirmed = async (q: Question): Promise<boolean> => {
    if (typeof edges?.confirm !== 'function') throw new UserError(NO_QUESTION);
    return (await edges.confirm(q)) === true;
  };
  /** Reconcile checks running now, by request: one at a time each, however often a page asks. */
  const checking = new Set<string>();
  const rendererLog = scopedLogger('renderer');
  /** The page's error reports in the current minute (when it began, how many, how many dropped). */
  const reports = { since: 0, count: 0, dropped: 0 };
  const keyResult = (key: KeyWithSecret) => {
    const { secret: _secret, ...view } = key;
    return { key: { ...view, requests: 0 }, keyFile: keyFileOf(key), pasteLines: host.keys.pasteLines('/path/where/you/saved/the/key.json', key.spool) };
  };
  return {
    'status.get': () => host.status.view(),
    'approvals.list': () => host.verdicts.pending(),
    'approvals.approve': async ({ id, forSeconds, widen }) => {
      // One approval decides the request on the card; a grant also lets later calls run unseen, for
      // up to a day, after the page that asked is gone: that the person confirms natively, seeing all
      // this one runs and what later calls may carry. A widen the request cannot take is refused first.
      if (forSeconds !== undefined) {
        const rules = host.verdicts.grantRules(id, widen);
        const shown = host.verdicts.pending().find((x) => x.id === id);
        if (!shown) throw new UserError(`request ${id} is no longer waiting for approval`);
        if (!(await confirmed(forAWhileQuestion(shown, rules, forSeconds)))) throw new UserError('Not approved: cancelled.');
        // What the person saw must be what is approved: the card moved meanwhile (decided, or back
        // with another run), so the answer is to a card that is no longer there.
        const now = host.verdicts.pending().find((x) => x.id === id);
        if (now?.waiting_since !== shown.waiting_since) throw new UserError(`request ${id} changed while you were asked; look again`);
      }
      const r = host.verdicts.approve(id, actor, forSeconds, widen);
      return { state: r.row.state, grant_id: r.grant?.id ?? null, also_approved: r.alsoApproved.map((x) => x.id) };
    },
    'approvals.deny': ({ id, reason }) => ({ state: host.verdicts.deny(id, actor, reason).state }),
    'grants.list': (req) => host.verdicts.grants(req?.all ?? false),
    'grants.revoke': ({ id }) => ({ changed: host.verdicts.revokeGrant(id, actor) }),
    'allowlist.read': () => {
      const { path, text, hash, check } = host.allowlist.read();
      return { path, text, hash, check };
    },
    'allowlist.validate': ({ text }) => host.allowlist.validate(text),
    'allowlist.save': async ({ text, baseHash }) => {
      const current = host.allowlist.read();
      const changes = allowlistChanges(current.text, text, current.path);
      // Nothing to ask when it is refused anyway (invalid, or changed outside), or nothing more may run.
      if (current.hash === baseHash && host.allowlist.validate(text).ok && widensWhatRuns(changes)) {
        const n = changes.added.length + changes.changed.length;
        const yes = await confirmed({
          title: 'Save the allowlist',
          message: `Let the sandbox run ${n === 1 ? 'this command' : `these ${n} commands`}?`,
          detail: `${describeChanges(changes)}\n\nSaved to ${current.path}; the host uses it within a second.`,
          confirmLabel: 'Save',
        });
        if (!yes) return { saved: false, reason: 'cancelled', check: host.allowlist.validate(text), hash: current.hash };
      }
      return host.allowlist.save(text, baseHash, actor);
    },
    'allowlist.preview': ({ text, op, args }) => {
      const r = host.allowlist.preview(text, op, args);
      return r.ok ? { ok: true, plan: planView(r.plan) } : r;
    },
    'allowlist.dryRun': async ({ text, op, args }) => {
      const preview = host.allowlist.preview(text, op, args);
      if (!preview.ok) return preview;
      const yes = await confirmed({
        title: 'Dry run',
        message: `Run ${visible(op)} now, on this computer?`,
        detail: `${describeRun(preview.plan)}\n\nIt runs once, right now, without approval.`,
        confirmLabel: 'Run it',
      });
      if (!yes) return { ok: false, message: 'Not run: cancelled.', cancelled: true };
      const r = await host.allowlist.dryRun(text, op, args, actor);
      return r.ok ? ranView(r) : r;
    },
    'allowlist.dryRunReconcile': async ({ text, op, args }) => {
      const preview = host.allowlist.previewReconcile(text, op, args);
      if (!preview.ok) return preview;
      const yes = await confirmed({
        title: 'Dry run of a reconcile check',
        message: `Run the reconcile command of ${visible(op)} now, on this computer?`,
        detail: `${describeRun(preview.plan)}\n\nIt runs once, right now, for the stand-in request id "${DRY_RUN_REQUEST_ID}", without approval.`,
        confirmLabel: 'Run it',
      });
      if (!yes) return { ok: false, message: 'Not run: cancelled.', cancelled: true };
      const r = await host.allowlist.dryRunReconcile(text, op, args, actor);
      return r.ok ? { ...ranView(r), verdict: r.verdict } : r;
    },
    'catalog.get': () => host.spools.catalog(),
    'keys.list': () => host.keys.list(),
    'keys.create': async ({ name, scope, ops, spool }) => {
      const target = spool ?? host.context.spool?.name;
      if (!target) throw new UserError('this home has several spools and none named "default": choose the spool the key is for');
      const dir = host.spools.list().find((s) => s.name === target)?.dir;
      if (!dir) throw new UserError(`there is no spool named "${target}"`);
      const yes = await confirmed({
        title: 'New key',
        message: `Create a ${scope} key "${visible(name)}" for spool ${target}?`,
        detail: keyPowers(scope, ops ?? null, dir),
        confirmLabel: 'Create key',
      });
      return yes ? keyResult(host.keys.create(name, scope, ops, actor, target)) : null;
    },
    'keys.revoke': ({ keyId }) => ({ changed: host.keys.revoke(keyId, actor) }),
    'keys.rotate': async ({ keyId }) => {
      const key = host.keys.list().find((k) => k.key_id === keyId);
      if (!key) throw new UserError(`no key ${keyId}`);
      const dir = host.spools.list().find((s) => s.name === key.spool)?.dir ?? key.spool;
      // What limits the key carries over: a rotation must not be a way out of a spend ceiling.
      const ceilings = host.keys.ceilings(keyId).map(({ ceiling: c, spend }) => {
        const limits = [c.max_runs !== undefined && `${spend.runs} of ${c.max_runs} runs`, c.max_cost !== undefined && `${spend.cost} of ${c.max_cost} cost units`, c.max_run_time_s !== undefined && `${spend.run_time_s} of ${c.max_run_time_s} s of run time`];
        return `  ${c.name} (${c.key_id ? 'this key' : 'each key'}, per ${c.window_s} s, ${c.action}): ${limits.filter(Boolean).join(', ')} used`;
      });
      const yes = await confirmed({
        title: 'Rotate key',
        message: `Replace key ${visible(keyId)} ("${visible(key.name)}") with a new one?`,
        detail: [
          `The old key is revoked at once. The new key is a ${key.scope} key for spool ${key.spool}. ${keyPowers(key.scope, key.ops, dir)}`,
          ceilings.length
            ? `It keeps the old key's spend so far and its spend ceilings (those pinned to the old key id are pinned to the new one):\n${ceilings.join('\n')}`
            : 'It keeps the old key\'s spend so far: any spend ceiling set later counts it.',
        ].join('\n\n'),
        confirmLabel: 'Rotate key',
      });
      return yes ? keyResult(host.keys.rotate(keyId, actor)) : null;
    },
    'keys.saveFile': async ({ keyFile, fileName }) => {
      const file = await edges?.pickSavePath('Save the key file', fileName);
      if (!file) return { saved: false, path: null };
      host.keys.saveFile(keyFile, file);
      return { saved: true, path: file };
    },
    'settings.get': () => host.settings.get(),
    'settings.set': async ({ name, value }) => {
      // A change that lets more run, or with less oversight or trace (settings.ts, LOOSENS), is
      // asked. (Spools are refused here by withSetting: they change only through spools.add/remove.)
      const before = host.settings.get();
      const after = withSetting(before, name, value); // throws when invalid
      const key = name as keyof Settings;
      if (loosens(key, before, after)) {
        const loosened = key === 'ceilings' ? loosenedCeilings(before.ceilings, after.ceilings) : [];
        const yes = await confirmed(
          key === 'ceilings'
            ? {
                title: 'Spend ceilings',
                message: `Remove or change ${loosened.length === 1 ? 'a spend ceiling' : `${loosened.length} spend ceilings`}?`,
                detail: `${loosened.join('\n')}\n\n${LOOSENS.ceilings.why}`,
                confirmLabel: 'Change ceilings',
              }
            : {
                title: 'Settings',
                message: `Change ${name}?`,
                detail: `${name}: ${settingText(after[key])} (now ${settingText(before[key])})\n\n${LOOSENS[key].why}`,
                confirmLabel: 'Change it',
              },
        );
        if (!yes) throw new UserError('Not changed: cancelled.');
      }
      return host.settings.set(name, value, actor);
    },
    'spend.get': () => host.status.report().spend,
    'audit.search': (q) => host.audit.search(q),
    'requests.list': (f) => host.requests.list(f),
    'requests.output': ({ id, from }) => ({ ...host.requests.liveOutput(id, from), state: host.requests.get(id)?.state ?? null }),
    'requests.get': ({ id }) => {
      const r = host.requests.get(id);
      if (!r) return null;
      const plan = planOf(r);
      const handle = (wireId: string) => host.requests.handleIn(r.spool, wireId);
      const view: RequestView = {
        id: r.id,
        ...(r.wire_id !== r.id ? { wire_id: r.wire_id } : {}),
        key_id: r.key_id,
        op: r.op,
        spool: r.spool,
        args: JSON.parse(r.args_json) as Record<string, unknown>,
        intent: r.intent,
        state: r.state,
        created_at: r.created_at,
        expires_at: r.expires_at,
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
        plan: plan && { argv: plan.argv, cwd: plan.cwd },
        orphaned: r.orphaned === 1 && r.state === 'running',
        resolved_by: r.resolved_by === 'human' || r.resolved_by === 'reconcile' ? r.resolved_by : null,
        reconcile: reconcileOf(r),
        plan_id: r.plan_id && handle(r.plan_id),
        steps: planDocOf(r)?.steps.map((s) => (s.request_id === null ? s : { ...s, request_id: handle(s.request_id) })) ?? null,
      };
      return view;
    },
    'requests.resolve': ({ id, outcome, note }) => ({ state: host.verdicts.resolve(id, outcome, note, actor).state }),
    'requests.cancel': ({ id }) => {
      const { changed, state, message } = host.verdicts.cancel(id, actor);
      return { changed, state, message };
    },
    'requests.checkReconcile': async ({ id }) => {
      if (checking.has(id)) throw new UserError(`a reconcile check of ${id} is already running`);
      checking.add(id);
      try {
        const row = await host.verdicts.checkReconcile(id, actor);
        return { state: row.state, reconcile: reconcileOf(row) };
      } finally {
        checking.delete(id);
      }
    },
    'host.setPaused': ({ paused }) => ({ changed: host.settings.setPaused(paused, actor) }),
    'inbox.send': ({ text, spool }) => host.inbox.send(text, actor, spool),
    'spools.list': () => host.spools.list(),
    'spools.add': async ({ name, dir }) => {
      // Refused before the question: only what the name and the path's text say. What is on the disk
      // there (missing, a folder, files) is looked at only once the person said yes, so that a page
      // cannot use this call to learn what exists; refused then, nothing is touched.
      const refused = host.spools.namingProblem(name, dir);
      if (refused) throw new UserError(refused);
      const yes = await confirmed({
        title: 'Add a spool',
        message: `Share ${visible(dir)} with one sandbox as spool ${name}?`,
        detail: 'Dumbwaiter creates the folder, or uses it if it is empty or already a spool, private to you; puts the sandbox\'s clients in it and serves it at once. Only keys made for this spool work through it.',
        confirmLabel: 'Add spool',
      });
      return yes ? host.spools.add(name, dir, actor) : null;
    },
    'spools.remove': async ({ name }) => {
      // What would be refused is refused before the question.
      const refused = host.spools.removeProblem(name);
      if (refused) throw new UserError(refused);
      const spool = host.spools.list().find((s) => s.name === name)!;
      const keys = spool.keys === 0 ? '' : ` Its ${spool.keys === 1 ? 'key is' : `${spool.keys} keys are`} revoked.`;
      const yes = await confirmed({
        title: 'Remove a spool',
        message: `Stop serving spool ${name}?`,
        detail: `${visible(spool.dir)}\n\nThe folder is left as it is, files and all: delete it yourself if you no longer need it.${keys}`,
        confirmLabel: 'Remove spool',
      });
      return yes ? host.spools.remove(name, actor) : null;
    },
    'spools.check': ({ name }) => host.spools.probe(name),
    'dialog.pickFolder': ({ title, defaultPath }) => edges?.pickFolder(title, defaultPath) ?? null,
    'app.openLogs': async () => {
      if (typeof edges?.openLogs !== 'function') throw new UserError('refused: only the desktop app has a logs folder to open');
      const problem = await edges.openLogs();
      if (problem) throw new UserError(`The logs folder could not be opened: ${problem}`);
      return null;
    },
    'app.reportError': ({ kind, message, stack }) => {
      const now = Date.now();
      if (now - reports.since >= 60_000) {
        if (reports.dropped) rendererLog.warn(`${reports.dropped} more errors from the page were not logged (at most ${RENDERER_ERRORS_PER_MINUTE} a minute)`);
        Object.assign(reports, { since: now, count: 0, dropped: 0 });
      }
      if (++reports.count > RENDERER_ERRORS_PER_MINUTE) reports.dropped++;
      // The log escapes every part (core/log.ts): the page's text cannot act on a terminal nor forge a line.
      else rendererLog.error(kind === 'error' ? 'uncaught error in the page:' : 'unhandled rejection in the page:', stack || message);
      return null;
    },
  };
}
