// `dumbwaiter`: the host's headless command line.
import { accessSync, constants, existsSync, lstatSync, statSync, type Stats } from 'node:fs';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import path from 'node:path';
import { defaultSpoolDir, resolveHomeDir } from '../core/home';
import { UserError } from '../core/errors';
import { initHome } from '../core/setup';
import { Host } from '../core/host/host';
import type { StatusReport } from '../core/host/status';
import { cliActor } from '../core/ledger/audit';
import { Daemon } from '../core/daemon/daemon';
import { keepHeapSmall } from '../core/daemon/memory';
import { APP_VERSION } from '../core/version';
import { parse, parseSub, splitCommand, unknownOption, UsageError } from './args';
import { ago, endQuietlyOnClosedPipe, printJson, printTable, say, warn } from './output';
import { visible } from '../../shared/text/visible';
import { commandName } from './invocation';
import { shellWord } from '../../shared/text/shellWord';
import type { Scope } from '../core/keys/keyStore';
import { STATES } from '../../shared/protocol/types';
import { attemptEnd, verdictText } from '../../shared/protocol/reconcileText';
import { reconcileOf } from '../core/ledger/requests';
import { isInside } from '../core/allowlist/pathArg';
import { parseSettingValue, type Settings } from '../core/settings';
import { parseDuration } from '../core/duration';
import { rulesInBrief } from '../core/policy/grantRules';
import { parseWiden } from './widen';
import type { KeyView, SpoolInfo } from '../../shared/ipc/views';
import { probeLines, type ProbeReport } from '../../shared/protocol/probe';
import { installService, serviceKind, servicePlan, serviceStatus, uninstallService } from '../core/loginService/manager';
import { daemonArgv } from '../core/loginService/units';
import { approvalCardText, approvedText } from './commands/approvalCard';
import { watchApprovals, WATCH_USAGE } from './commands/approvalsWatch';
import { listRequests, REQUESTS_OPTIONS, REQUESTS_USAGE } from './commands/requests';
import { showRequest, SHOW_USAGE } from './commands/show';
import { LOGS_OPTIONS, LOGS_USAGE, printLogs } from './commands/logs';

const HELP = `dumbwaiter ${APP_VERSION}: run allowlisted operations for a sandboxed agent, through a spool folder

Usage: dumbwaiter COMMAND [options]

  init [--spool DIR [--parents]]         create the home (allowlist, keys, ledger) and the spool
                                         (its folder only: --parents also makes missing ones above it)
  daemon                                 run the host in the foreground until Ctrl-C / SIGTERM
  spools list | spools add NAME DIR [--parents] | spools remove NAME | spools check NAME
                                         the home's spools, one folder per sandbox (check: probe
                                         its mount: rename, fsync, file events, filesystem...)
  spools adopt NAME DIR --from-home HOME --yes
                                         hand over a spool another home serves (a spool has one
                                         home; that home's daemon must be stopped)
  keys create NAME --out FILE [--scope read|write] [--ops a,b] [--force]
                                         a key for one spool (--spool NAME, else default)
  keys list | keys revoke KEY_ID | keys rotate KEY_ID --out FILE [--force]
  requests [--state S,...] [--key NAME] [--since DURATION] [--limit N]
                                         recent requests, newest first (default 50; --spool NAME:
                                         that spool's only; --key: a key's name or id; --since 2h)
  show ID                                one request in full: argv, folder, environment, who decided
                                         what and when, outcome, reconcile attempt, audit entries
  logs ID [--follow] [--raw]             a run's output (finished: the host's record; running: its
                                         live log; --follow: until it ends). Control characters are
                                         escaped (the sandbox's arguments steer it); --raw: as is
  approvals list                         requests waiting for a human, with what they would run
  approvals watch [--spool NAME]         ask about each request that needs a human as it comes: its
                                         whole card, then approve, approve for a while, deny with a
                                         reason, or skip (answers are lines read from stdin)
  approvals approve ID [--for DURATION [--any-args | --args-match NAME=REGEX ...]]
                                         approve; with --for 30m, 2h, 90s or minutes, also this key's
                                         later calls of this operation with the same arguments, for
                                         that long, as a revocable grant (--any-args: with any
                                         arguments; --args-match: NAME may be any value the RE2
                                         pattern matches whole; repeat it for several)
  approvals deny ID [--reason TEXT]
  approvals grants [--all] | approvals revoke-grant GRANT_ID
                                         grants, with what each argument of a call may be
  cancel ID                              cancel a queued, waiting or running request
  pause | resume                         hold / release the start of new runs
  config get [NAME] | config set NAME VALUE
                                         read and change the host's settings (VALUE is JSON or text)
  resolve ID --succeeded|--failed [--note TEXT] [--force]
                                         settle a run left uncertain by a host crash (--force: an
                                         orphaned run still running; the host then ends it)
  resolve ID --check                     ask the operation's reconcile command again whether an
                                         uncertain run took effect (the request moves as it says)
  status                                 daemon, allowlist, queue, approvals, spend, keys
  audit [QUERY] [--kind K] [--id ID] [--limit N]
                                         search the audit log (every word must match)
  service install | service uninstall | service status [--dry-run]
                                         start this home's daemon at login (a systemd user unit,
                                         a launchd agent, a scheduled task); --dry-run prints it

Every command takes --home DIR (else $DUMBWAITER_HOME, else the app's data folder) and
--spool NAME|DIR (else $DUMBWAITER_SPOOL): the spool a command acts on (else the one named
default), and for daemon the only spool it serves (else every spool of the home). Commands that
read state take --json.
`;

function openHost(values: { home?: string; spool?: string }): Host {
  return new Host(resolveHomeDir(values.home), values.spool ?? process.env.DUMBWAITER_SPOOL);
}

function withHost<T>(values: { home?: string; spool?: string }, fn: (host: Host) => T): T {
  const host = openHost(values);
  try {
    return fn(host);
  } finally {
    host.close();
  }
}

function spoolFlag(values: { spool?: string }): string | undefined {
  return values.spool ?? process.env.DUMBWAITER_SPOOL;
}

/** A new or moved spool's mount, as `spools check` finds it (a network or shared mount, NFS, SMB, 9p,
 *  virtiofs, FUSE, said as such): a folder meant to be shared that is a local one is seen at once. */
async function probeNewSpool(values: { home?: string }, name: string): Promise<ProbeReport> {
  const host = new Host(resolveHomeDir(values.home));
  try {
    return await host.spools.probe(name);
  } finally {
    host.close();
  }
}

async function cmdInit(argv: string[]): Promise<void> {
  const { values } = parse(argv, { parents: { type: 'boolean', default: false } });
  const r = initHome(resolveHomeDir(values.home), spoolFlag(values), defaultSpoolDir(), undefined, { parents: values.parents });
  const probe = await probeNewSpool(values, r.name);
  if (values.json) return printJson({ home: r.home.root, spool: r.spool.root, created: r.created, probe });
  say(`Home:  ${r.home.root}   (private: allowlist.yaml, settings.json, ledger.sqlite, logs/)`);
  say(`Spool: ${r.spool.root}   (share this folder with the sandbox)`);
  say(`Mount: ${visible(probe.summary)}`);
  say(r.created.length ? `Created: ${r.created.map((p) => path.basename(p)).join(', ')}` : 'Everything was already in place.');
  if (r.adopted) say('The spool named no home (an earlier version made it): this home serves it from now on, and other homes are refused it.');
  // Commands that work as printed: the name as it can be typed here, the folders given as flags, and
  // the key file outside the current folder (often a checkout, where a secret could be committed).
  const dw = commandName();
  const where = [...(values.home ? ['--home', r.home.root] : []), ...(values.spool ? ['--spool', r.spool.root] : [])].map((w) => ` ${shellWord(w)}`).join('');
  say(`Next:  edit ${r.home.allowlist}, then
       ${dw} keys create my-sandbox --out ${shellWord(path.join(os.homedir(), 'my-sandbox.key.json'))}${where}
       ${dw} daemon${where}`);
}

async function cmdDaemon(argv: string[]): Promise<void> {
  const { values } = parse(argv, {});
  // A terminal or pipe that went away (a closed `| tee`, a killed parent) must not take the host down
  // with it at its next log line, leaving its runs behind: the log file in the home keeps everything.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});
  keepHeapSmall();
  const d = await Daemon.start({ homeDir: resolveHomeDir(values.home), spool: spoolFlag(values), command: `dumbwaiter daemon (pid ${process.pid})` });
  const ops = d.allowlist.get().operations.size;
  const spools = [...d.spools.values()].map((s) => (d.spools.size === 1 ? s.plain.root : `${s.name} (${s.plain.root})`)).join(', ');
  const stopped = new Promise<void>((resolve) => {
    let stopping: Settings['runs_on_stop'] | null = null;
    // A repeated signal (a second Ctrl-C, `kill` twice) must not end the process in the middle of the
    // stop and leave its runs behind: it ends their grace period instead, and they are recorded as
    // usual; runs the stop leaves running (runs_on_stop: leave) it leaves alone.
    const stop = (sig: string) => {
      if (stopping === 'leave') return warn(`${sig}: already stopping; running work is left running (runs_on_stop: leave)`);
      if (stopping) {
        warn(`${sig}: ending running work now`);
        return d.hurry();
      }
      const runs = (stopping = d.settings.runs_on_stop);
      warn(
        runs === 'leave'
          ? `${sig}: stopping; running work is left running (runs_on_stop: leave) and recorded when the daemon starts again`
          : `${sig}: stopping (running work gets ${d.settings.shutdown_grace_s} s to finish)`,
      );
      void d.stop({ runs }).then(resolve);
    };
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGTERM', () => stop('SIGTERM'));
  });
  // Only once the signals are ours: whoever reads this line may send one at once.
  warn(`Dumbwaiter daemon running: ${d.spools.size === 1 ? 'spool' : 'spools'} ${spools}, ${ops} operation${ops === 1 ? '' : 's'}. Ctrl-C stops it.`);
  await stopped;
}

function keyRows(keys: KeyView[]): string[][] {
  return [
    ['KEY_ID', 'NAME', 'SPOOL', 'SCOPE', 'OPS', 'STATE', 'LAST USED'],
    ...keys.map((k) => [k.key_id, k.name, k.spool, k.scope, k.ops ? k.ops.join(',') : '(all)', k.revoked_at ? `revoked ${ago(k.revoked_at)}` : 'active', ago(k.last_used_at)]),
  ];
}

/** Checked before a key is made: its file can be written (the folder is there and writable, no file
 *  is in the way unless --force, and only a file is overwritten). The key is committed only once the
 *  file is written (HostKeys.create's `save`): a secret nobody holds must never be active. */
function checkKeyOut(file: string, force: boolean): void {
  const dir = path.dirname(file);
  const cannot = (why: string) => new UserError(`cannot write the key file ${file}: ${why}`);
  let st: Stats;
  try {
    st = statSync(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw cannot(code === 'ENOENT' ? `the folder ${dir} does not exist` : `the folder ${dir} cannot be reached (${code})`);
  }
  if (!st.isDirectory()) throw cannot(`${dir} is not a folder`);
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch {
    throw cannot(`the folder ${dir} is not writable by you`);
  }
  let there: Stats | null = null;
  try {
    there = lstatSync(file);
  } catch {
    /* not there: as it should be */
  }
  if (there && !force) throw new UserError(`${file} exists; pass --force to overwrite it`);
  if (there && !there.isFile()) throw cannot('it is not a regular file');
}

function warnIfInSpool(host: Host, file: string): void {
  const spool = host.context.settings.spools.find((s) => isInside(s.dir, file));
  if (spool) warn(`note: ${file} is inside spool ${spool.name}: anything that can read that spool can use this key.`);
}

function cmdKeys(argv: string[]): void {
  const { sub, values, positionals } = parseSub(argv, {
    scope: { type: 'string', default: 'read' },
    ops: { type: 'string' },
    out: { type: 'string' },
    force: { type: 'boolean', default: false },
  });
  withHost(values, (host) => {
    const actor = cliActor();
    switch (sub) {
      case 'create': {
        const name = positionals[0];
        if (!name || !values.out) throw new UsageError('usage: dumbwaiter keys create NAME --out FILE [--scope read|write] [--ops a,b]');
        const out = path.resolve(values.out);
        const ops = values.ops ? values.ops.split(',').map((s) => s.trim()).filter(Boolean) : null;
        checkKeyOut(out, values.force);
        const key = host.keys.create(name, values.scope as Scope, ops, actor, undefined, (k) => host.keys.writeFile(k, out));
        warnIfInSpool(host, out);
        if (values.json) return printJson({ key_id: key.key_id, name: key.name, scope: key.scope, ops: key.ops, spool: key.spool, file: out });
        say(`Created key ${key.key_id} ("${name}", ${key.scope}${ops ? `, ops ${ops.join(',')}` : ''}) for spool ${key.spool}: it works through that spool only.`);
        say(`Key file: ${out} (mode 0600). Give it to the sandbox; it is shown only this once.`);
        say(host.keys.pasteLines(out, key.spool));
        return;
      }
      case 'list': {
        const keys = host.keys.list(spoolFlag(values) === undefined ? undefined : host.context.spool?.name);
        if (values.json) return printJson(keys);
        if (keys.length === 0) return say('No keys yet. Create one with: dumbwaiter keys create NAME --out FILE');
        return printTable(keyRows(keys));
      }
      case 'revoke': {
        const id = positionals[0];
        if (!id) throw new UsageError('usage: dumbwaiter keys revoke KEY_ID');
        const changed = host.keys.revoke(id, actor);
        if (values.json) return printJson({ key_id: id, revoked: true, changed });
        return say(changed ? `Revoked ${id}: its requests are now rejected (revoked_key).` : `${id} was already revoked.`);
      }
      case 'rotate': {
        const id = positionals[0];
        if (!id || !values.out) throw new UsageError('usage: dumbwaiter keys rotate KEY_ID --out FILE');
        const out = path.resolve(values.out);
        checkKeyOut(out, values.force);
        const fresh = host.keys.rotate(id, actor, (k) => host.keys.writeFile(k, out));
        warnIfInSpool(host, out);
        if (values.json) return printJson({ old_key_id: id, key_id: fresh.key_id, spool: fresh.spool, file: out });
        return say(`Rotated ${id} -> ${fresh.key_id} (spool ${fresh.spool}; the old key is revoked; the new one keeps its spend so far and its spend ceilings). New key file: ${out}`);
      }
      default:
        throw new UsageError('usage: dumbwaiter keys create|list|revoke|rotate ...');
    }
  });
}

async function cmdApprovalsWatch(values: { home?: string; spool?: string; json?: boolean }, positionals: string[]): Promise<void> {
  if (positionals.length || values.json) throw new UsageError(WATCH_USAGE);
  const svc = openHost(values);
  try {
    const spool = spoolFlag(values) === undefined ? undefined : svc.context.spool?.name;
    await watchApprovals(svc, spool);
  } finally {
    svc.close();
  }
}

function cmdApprovals(argv: string[]): void | Promise<void> {
  const { sub, values, positionals } = parseSub(argv, {
    for: { type: 'string' },
    'any-args': { type: 'boolean', default: false },
    'args-match': { type: 'string', multiple: true },
    reason: { type: 'string', default: '' },
    all: { type: 'boolean', default: false },
  });
  if (sub === 'watch') return cmdApprovalsWatch(values, positionals);
  const id = positionals[0];
  withHost(values, (host) => {
    const actor = cliActor();
    switch (sub) {
      case undefined:
      case 'list': {
        const pending = host.verdicts.pending();
        if (values.json) return printJson(pending);
        if (pending.length === 0) return say('Nothing is waiting for approval.');
        // Each as its card shows it, whole, the same text `approvals watch` asks with.
        const several = host.context.settings.spools.length > 1;
        return say(pending.map((p) => approvalCardText(p, several)).join('\n\n'));
      }
      case 'approve': {
        if (!id) throw new UsageError(`usage: dumbwaiter approvals approve ID [--for DURATION [--any-args | --args-match NAME=REGEX ...]]`);
        const seconds = values.for === undefined ? undefined : parseDuration(values.for);
        const widen = parseWiden(values['any-args'], values['args-match'], () => Object.keys(host.verdicts.grantRules(id)));
        const r = host.verdicts.approve(id, actor, seconds, widen);
        if (values.json) return printJson({ id, state: r.row.state, grant: r.grant, also_approved: r.alsoApproved.map((x) => x.id) });
        return say(approvedText(id, r));
      }
      case 'deny': {
        if (!id) throw new UsageError('usage: dumbwaiter approvals deny ID [--reason TEXT]');
        const row = host.verdicts.deny(id, actor, values.reason);
        if (values.json) return printJson({ id, state: row.state, reason: row.error_message });
        return say(`Denied ${id}.`);
      }
      case 'grants': {
        const grants = host.verdicts.grants(values.all);
        if (values.json) return printJson(grants);
        if (grants.length === 0) return say(values.all ? 'No grants.' : 'No active grants.');
        return printTable([
          ['GRANT', 'KEY', 'OPERATION', 'UNTIL', 'USES', 'BY', 'STATE', 'ARGUMENTS'],
          ...grants.map((g) => [
            g.id,
            g.key_id,
            g.op,
            g.expires_at,
            String(g.uses),
            g.created_by,
            g.revoked_at ? `revoked by ${g.revoked_by}` : g.expires_at < new Date().toISOString() ? 'expired' : 'active',
            rulesInBrief(g.args),
          ]),
        ]);
      }
      case 'revoke-grant': {
        if (!id) throw new UsageError('usage: dumbwaiter approvals revoke-grant GRANT_ID');
        const changed = host.verdicts.revokeGrant(id, actor);
        if (values.json) return printJson({ id, revoked: true, changed });
        return say(changed ? `Grant ${id} revoked.` : `Grant ${id} was already revoked or expired.`);
      }
      default:
        throw new UsageError('usage: dumbwaiter approvals list|watch|approve|deny|grants|revoke-grant ...');
    }
  });
}

function cmdCancel(argv: string[]): void {
  const { values, positionals } = parse(argv, {});
  const id = positionals[0];
  if (!id) throw new UsageError('usage: dumbwaiter cancel ID');
  withHost(values, (host) => {
    const out = host.verdicts.cancel(id, cliActor());
    if (values.json) return printJson({ id, changed: out.changed, state: out.state, message: out.message });
    say(out.message);
  });
}

function cmdPause(paused: boolean) {
  return (argv: string[]): void => {
    const { values } = parse(argv, {});
    withHost(values, (host) => {
      const changed = host.settings.setPaused(paused, cliActor());
      if (values.json) return printJson({ paused, changed });
      if (!changed) return say(paused ? 'Already paused.' : 'Not paused.');
      say(paused ? 'Paused: requests are still claimed and recorded, but nothing new starts. Resume with: dumbwaiter resume' : 'Resumed.');
    });
  };
}

function cmdConfig(argv: string[]): void {
  const { sub, values, positionals } = parseSub(argv, { parents: { type: 'boolean', default: false } });
  withHost(values, (host) => {
    if (sub === 'get' || sub === undefined) {
      const settings = host.settings.get();
      const name = positionals[0];
      if (name !== undefined && !(name in settings)) throw new UserError(`unknown setting "${name}"`);
      const shown = name === undefined ? settings : { [name]: settings[name as keyof typeof settings] };
      if (values.json) return printJson(shown);
      for (const [k, v] of Object.entries(shown)) say(`${k} = ${JSON.stringify(v)}`);
      return;
    }
    if (sub === 'set') {
      const [name, value] = positionals;
      if (!name || value === undefined) throw new UsageError('usage: dumbwaiter config set NAME VALUE');
      // A spool moves through the one call that checks the new folder as `init` does.
      if (name === 'spool') {
        const r = host.spools.use(path.resolve(value), cliActor(), values.parents);
        return values.json ? printJson({ spool: r.path }) : say(r.message);
      }
      const next = host.settings.set(name, parseSettingValue(value), cliActor());
      if (values.json) return printJson({ [name]: next[name as keyof typeof next] });
      return say(`${name} = ${JSON.stringify(next[name as keyof typeof next])}`);
    }
    throw new UsageError('usage: dumbwaiter config get [NAME] | config set NAME VALUE');
  });
}

function bar(used: number, max: number): string {
  const width = 20;
  const filled = max === 0 ? width : Math.min(width, Math.round((used / max) * width));
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
}

const RESOLVE_USAGE = 'usage: dumbwaiter resolve ID --succeeded|--failed [--note TEXT] [--force] | resolve ID --check';

async function cmdResolve(argv: string[]): Promise<void> {
  const { values, positionals } = parse(argv, {
    succeeded: { type: 'boolean', default: false },
    failed: { type: 'boolean', default: false },
    check: { type: 'boolean', default: false },
    force: { type: 'boolean', default: false },
    note: { type: 'string', default: '' },
  });
  const id = positionals[0];
  const verdicts = [values.succeeded, values.failed, values.check].filter(Boolean).length;
  if (!id || verdicts !== 1 || (values.check && (values.force || values.note))) throw new UsageError(RESOLVE_USAGE);
  if (values.check) return checkReconcile(values, id);
  withHost(values, (host) => {
    const wasRunning = host.requests.get(id)?.state === 'running';
    const row = host.verdicts.resolve(id, values.succeeded ? 'succeeded' : 'failed', values.note, cliActor(), { force: values.force });
    if (values.json) return printJson({ id, state: row.state, resolved_by: row.resolved_by, note: row.note });
    say(`${id} resolved as ${row.state}.${wasRunning ? ` The host is ending its processes (process group ${row.pid}).` : ''}`);
  });
}

/** `resolve ID --check`: the reconcile command's verdict, and where that leaves the request. */
async function checkReconcile(values: { home?: string; spool?: string; json?: boolean }, id: string): Promise<void> {
  const host = openHost(values);
  try {
    const row = await host.verdicts.checkReconcile(id, cliActor());
    const attempt = reconcileOf(row);
    if (values.json) return printJson({ id, state: row.state, resolved_by: row.resolved_by, reconcile: attempt });
    const said = verdictText(attempt?.verdict ?? 'unknown');
    const how = attempt ? attemptEnd(attempt) : '';
    say(`${id}: its reconcile command says it ${said} (${visible(how)}); it is now ${row.state}.`);
    if (row.state === 'uncertain' && row.error_message) say(visible(row.error_message));
    if (row.error_code === 'not_applied') say('It is safe to retry with a new request id.');
  } finally {
    host.close();
  }
}

/** The allowlist's line of `status`: what the running daemon serves, and why the file is refused. */
function allowlistText(a: StatusReport['allowlist']): string {
  const ops = `${a.operations.length} operations (${a.operations.join(', ') || 'none'})`;
  if (a.ok) return `ok, ${ops}${a.serving === 'file' && a.since ? `, served since ${a.since}` : ''}`;
  const serving =
    a.serving === 'last_good' ? `\n  Serving the last good version, from ${a.since ?? 'an earlier start'}: ${ops}, until the file is fixed` : a.serving === 'none' ? '\n  No operation is served until the file is fixed' : '';
  return `INVALID: ${a.error}${serving}`;
}

function cmdStatus(argv: string[]): void {
  const { values } = parse(argv, {});
  withHost(values, (host) => {
    const s = host.status.report();
    if (values.json) return printJson(s);
    const d = s.daemon;
    say(`Daemon:    ${d.running ? `running${d.holder ? ` (pid ${d.holder.pid}, since ${d.holder.started_at})` : ''}` : 'not running'}; last heartbeat ${d.heartbeat_problem ? `unknown: ${visible(d.heartbeat_problem)}` : ago(d.heartbeat_at)}`);
    say(`Home:      ${s.home}`);
    if (s.spools.length === 0) say('Spools:    none (dumbwaiter spools add NAME DIR)');
    for (const sp of s.spools) {
      say(`Spool:     ${sp.name}  ${sp.dir}  (${sp.keys} key${sp.keys === 1 ? '' : 's'}, ${sp.open} open${sp.probe ? `; ${visible(sp.probe.summary)}` : ''})`);
      if (sp.problem) say(`  SPOOL PROBLEM: ${visible(sp.problem)}`);
    }
    say(`Allowlist: ${allowlistText(s.allowlist)}`);
    say(`Spawning:  ${s.spawning.why}`);
    for (const d of s.allowlist.disabled) say(`  DISABLED ${d.name}: ${visible(d.reason)}`);
    const c = s.requests;
    say(`Requests:  ${STATES.map((k) => `${k} ${c[k] ?? 0}`).join(', ')}`);
    for (const r of s.running) {
      const orphan = r.orphaned ? `; ORPHANED: it outlived a host that stopped and is watched (dumbwaiter cancel ${r.id} ends it)` : '';
      say(`  running   ${r.id}  ${r.op}  since ${r.started_at} (pid ${r.pid ?? '?'})${orphan}`);
    }
    for (const r of s.uncertain) {
      const last = r.reconcile ? `; last check ${r.reconcile.at}: ${r.reconcile.verdict === 'unknown' ? 'could not tell' : r.reconcile.verdict}` : '';
      say(`  UNCERTAIN ${r.id}  ${r.op}: dumbwaiter resolve ${r.id} ${r.reconcilable ? '--check|' : ''}--succeeded|--failed${last}`);
    }
    say(`Keys:      ${s.keys.active} active, ${s.keys.revoked} revoked`);
    if (s.paused) say('PAUSED:    nothing new starts (dumbwaiter resume)');
    if (s.approvals.length) say(`Approvals: ${s.approvals.length} waiting (dumbwaiter approvals list)`);
    for (const g of s.grants) say(`  grant     ${g.id}: ${g.op} for key ${g.key_id} until ${g.expires_at}, arguments ${rulesInBrief(g.args)}`);
    if (s.spend.length) say('Spend:');
    for (const r of s.spend) {
      const c = r.ceiling;
      const who = r.key_id ? `key ${r.key_id}` : 'all keys';
      const parts: string[] = [];
      if (c.max_runs !== undefined) parts.push(`runs ${bar(r.spend.runs, c.max_runs)} ${r.spend.runs}/${c.max_runs}`);
      if (c.max_cost !== undefined) parts.push(`cost ${bar(r.spend.cost, c.max_cost)} ${r.spend.cost}/${c.max_cost}`);
      if (c.max_run_time_s !== undefined) parts.push(`run time ${bar(r.spend.run_time_s, c.max_run_time_s)} ${r.spend.run_time_s}/${c.max_run_time_s} s`);
      say(`  ${c.name} (${who}, per ${c.window_s} s, ${c.action}): ${parts.join('  ')}`);
    }
  });
}

function cmdAudit(argv: string[]): void {
  const { values, positionals } = parse(argv, {
    kind: { type: 'string' },
    id: { type: 'string' },
    limit: { type: 'string', default: '50' },
  });
  const limit = Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError('--limit must be a positive whole number');
  withHost(values, (host) => {
    const rows = host.audit.search({ text: positionals.join(' '), kind: values.kind, requestId: values.id, limit });
    if (values.json) return printJson(rows);
    if (rows.length === 0) return say('No matching audit entries.');
    for (const r of rows.reverse()) {
      say(`${r.at}  ${r.kind.padEnd(16)} ${visible(r.request_id ?? '-')}  ${visible(r.actor)}: ${visible(r.message)}`);
    }
  });
}

function spoolRows(spools: SpoolInfo[]): string[][] {
  return [
    ['NAME', 'FOLDER', 'KEYS', 'OPEN', 'MOUNT', 'STATE'],
    ...spools.map((s) => [s.name, s.dir, String(s.keys), String(s.open), s.probe ? `${s.probe.fs_type}: ${s.probe.verdict}` : '(not probed)', s.problem ? `PROBLEM: ${visible(s.problem)}` : 'ok']),
  ];
}

const SPOOLS_USAGE = 'usage: dumbwaiter spools list | spools add NAME DIR [--parents] | spools adopt NAME DIR --from-home HOME --yes | spools remove NAME | spools check NAME';

async function cmdSpools(argv: string[]): Promise<void> {
  const { sub, values, positionals } = parseSub(argv, { 'from-home': { type: 'string' }, yes: { type: 'boolean', default: false }, parents: { type: 'boolean', default: false } });
  const [name, dir] = positionals;
  const host = openHost(values);
  try {
    const actor = cliActor();
    switch (sub) {
      case undefined:
      case 'list': {
        const spools = host.spools.list();
        if (values.json) return printJson(spools);
        if (spools.length === 0) return say('No spools yet. Add one with: dumbwaiter spools add NAME DIR');
        return printTable(spoolRows(spools));
      }
      case 'add': {
        if (!name || !dir) throw new UsageError('usage: dumbwaiter spools add NAME DIR [--parents]');
        const s = host.spools.add(name, path.resolve(dir), actor, values.parents);
        const probe = await host.spools.probe(s.name);
        if (values.json) return printJson({ ...s, probe });
        say(`Added spool ${s.name} at ${s.dir}: share this folder with one sandbox only.`);
        say(`Mount: ${visible(probe.summary)}`);
        say(`A running daemon serves it within a few seconds. Next: ${commandName()} keys create NAME --spool ${s.name} --out FILE`);
        return;
      }
      case 'adopt': {
        const from = values['from-home'];
        if (!name || !dir || !from) throw new UsageError('usage: dumbwaiter spools adopt NAME DIR --from-home HOME --yes');
        if (!values.yes) {
          throw new UserError(
            `this takes spool ${path.resolve(dir)} away from the home ${path.resolve(from)}: from now on only this home serves it, and that one's daemon refuses it. ` +
              'Its sandbox then needs a key of this home. Stop that home\'s daemon, then run this again with --yes',
          );
        }
        const s = host.spools.adopt(name, dir, from, actor);
        if (values.json) return printJson(s);
        say(`Spool ${s.name} at ${s.dir} is now this home's; the home ${path.resolve(from)} no longer serves it (remove it there: ${commandName()} spools remove NAME --home ${shellWord(path.resolve(from))}).`);
        say(`A running daemon serves it within a few seconds. Its sandbox needs a key of this home: ${commandName()} keys create NAME --spool ${s.name} --out FILE`);
        return;
      }
      case 'remove': {
        if (!name) throw new UsageError('usage: dumbwaiter spools remove NAME');
        const r = host.spools.remove(name, actor);
        if (values.json) return printJson(r);
        say(`Removed spool ${r.name}. Its folder ${r.dir} was left as it is${r.keys ? `; its ${r.keys === 1 ? 'key was' : `${r.keys} keys were`} revoked` : ''}.`);
        return;
      }
      case 'check': {
        if (!name) throw new UsageError('usage: dumbwaiter spools check NAME');
        const report = await host.spools.probe(name);
        if (values.json) printJson(report);
        else for (const line of probeLines(report)) say(visible(line));
        // An error, not process.exitCode: main()'s return value is the exit status.
        if (report.verdict === 'unusable') throw new UserError(`spool ${report.spool} is unusable: the daemon cannot serve it safely`);
        return;
      }
      default:
        throw new UsageError(SPOOLS_USAGE);
    }
  } finally {
    host.close();
  }
}

/** The daemon as a service starts it: this Node and this install's command line, by absolute paths. */
function daemonCommand(home: string) {
  const entry = fileURLToPath(new URL('../../bin/dumbwaiter.js', import.meta.url));
  if (!existsSync(entry)) throw new UserError(`this install's command line is not at ${entry}: no service can start it`);
  return { node: process.execPath, entry, home, path: process.env.PATH };
}

const SERVICE_USAGE = 'usage: dumbwaiter service install|uninstall|status [--dry-run]';

function cmdService(argv: string[]): void {
  const { sub, values, positionals } = parseSub(argv, { 'dry-run': { type: 'boolean', default: false } });
  if (positionals.length) throw new UsageError(SERVICE_USAGE);
  if (values.spool !== undefined) throw new UsageError('the service runs the daemon for every spool of the home: --spool is not taken');
  const home = resolveHomeDir(values.home);
  const command = daemonCommand(home);
  const plan = servicePlan(command, serviceKind());
  const dry = values['dry-run'];
  switch (sub) {
    case 'install':
      if (!dry) return say(installService(plan, home).join('\n'));
      say(`Would write ${plan.file ?? `the scheduled task "${plan.name}"`}:\n\n${plan.content}`);
      say(`It runs: ${daemonArgv(command).map(shellWord).join(' ')}`);
      return say(`Then: ${plan.install.map((s) => s.map(shellWord).join(' ')).join('; ')}`);
    case 'uninstall':
      if (dry) return say(`Would run: ${plan.uninstall.map((s) => s.map(shellWord).join(' ')).join('; ')}${plan.file ? `, then remove ${plan.file}` : ''}`);
      return say(uninstallService(plan).join('\n'));
    case 'status':
      return say(serviceStatus(plan, home).join('\n'));
    default:
      throw new UsageError(SERVICE_USAGE);
  }
}

function cmdRequests(argv: string[]): void {
  const { values, positionals } = parse(argv, REQUESTS_OPTIONS);
  if (positionals.length) throw new UsageError(REQUESTS_USAGE);
  withHost(values, (svc) => listRequests(svc, { ...values, spool: spoolFlag(values) }));
}

function cmdShow(argv: string[]): void {
  const { values, positionals } = parse(argv, {});
  if (positionals.length !== 1) throw new UsageError(SHOW_USAGE);
  withHost(values, (svc) => showRequest(svc, positionals[0]!, values.json));
}

async function cmdLogs(argv: string[]): Promise<void> {
  const { values, positionals } = parse(argv, LOGS_OPTIONS);
  if (positionals.length !== 1 || values.json) throw new UsageError(LOGS_USAGE);
  const svc = openHost(values);
  try {
    await printLogs(svc, positionals[0]!, values);
  } finally {
    svc.close();
  }
}

const COMMANDS: Record<string, (argv: string[]) => void | Promise<void>> = {
  init: cmdInit,
  spools: cmdSpools,
  daemon: cmdDaemon,
  keys: cmdKeys,
  resolve: cmdResolve,
  approvals: cmdApprovals,
  cancel: cmdCancel,
  pause: cmdPause(true),
  resume: cmdPause(false),
  config: cmdConfig,
  status: cmdStatus,
  audit: cmdAudit,
  service: cmdService,
  requests: cmdRequests,
  show: cmdShow,
  logs: cmdLogs,
};

/** What `dumbwaiter CMD [SUB] --help` prints: HELP's entries for that command (for that subcommand
 *  when it has entries of its own), and the options every command takes. */
export function commandHelp(cmd: string, sub?: string): string {
  const parts = HELP.trimEnd().split(/\n\n/);
  const list = parts.find((p) => p.startsWith('  '))!;
  const entries = list.split('\n').reduce<string[]>((acc, line) => {
    if (/^ {2}\S/.test(line)) acc.push(line);
    else if (acc.length) acc[acc.length - 1] += `\n${line}`;
    return acc;
  }, []);
  const first = (e: string) => e.split('\n')[0]!;
  const ofCmd = entries.filter((e) => first(e).trim().split(/\s+/)[0] === cmd || first(e).includes(`| ${cmd} `));
  const ofSub = sub ? ofCmd.filter((e) => first(e).includes(`${cmd} ${sub}`)) : [];
  return `${parts[0]}\n\nUsage: dumbwaiter ${cmd}${sub && ofSub.length ? ` ${sub}` : ''} ...\n\n${(ofSub.length ? ofSub : ofCmd).join('\n')}\n\n${parts[parts.length - 1]}\n`;
}

export async function main(argv: string[]): Promise<number> {
  if (argv.includes('--version') && argv.length === 1) argv = ['version'];
  const found = splitCommand(argv);
  const asksHelp = argv.includes('--help') || argv.includes('-h');
  if (!found || found.cmd === 'help') {
    const about = found?.cmd === 'help' ? splitCommand(found.rest) : null;
    if (about && COMMANDS[about.cmd]) {
      process.stdout.write(commandHelp(about.cmd, splitCommand(about.rest)?.cmd));
      return 0;
    }
    const unknown = found ? undefined : unknownOption(argv);
    if (unknown) {
      warn(`dumbwaiter: unknown option "${unknown}" before the command\n\n${HELP}`);
      return 2;
    }
    process.stdout.write(HELP);
    return found || asksHelp ? 0 : 2;
  }
  const { cmd, rest } = found;
  if (cmd === 'version') {
    say(APP_VERSION);
    return 0;
  }
  if (cmd !== 'daemon') endQuietlyOnClosedPipe(); // the daemon keeps running without its terminal
  const run = COMMANDS[cmd];
  if (!run) {
    warn(`dumbwaiter: unknown command "${cmd}"\n\n${HELP}`);
    return 2;
  }
  if (asksHelp) {
    process.stdout.write(commandHelp(cmd, splitCommand(rest)?.cmd));
    return 0;
  }
  try {
    await run(rest);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      warn(`dumbwaiter ${cmd}: ${e.message}`);
      return 2;
    }
    if (e instanceof UserError) {
      warn(`dumbwaiter ${cmd}: ${e.message}`);
      return 1;
    }
    // One line, never a stack (the message may quote what the sandbox wrote; warn escapes it).
    warn(`dumbwaiter ${cmd}: ${e instanceof Error ? e.message : String(e)}`);
    return 1;
  }
}
