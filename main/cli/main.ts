// `dumbwaiter`: the host's headless command line.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { defaultSpoolDir, resolveHomeDir } from '../core/home';
import { UserError } from '../core/errors';
import { initHome } from '../core/setup';
import { HostService } from '../core/service';
import { cliActor } from '../core/ledger/audit';
import { Daemon } from '../core/daemon/daemon';
import { APP_VERSION } from '../core/version';
import { parse, UsageError } from './args';
import { ago, printJson, printTable } from './output';
import type { Scope } from '../core/keys/keyStore';
import { isInside } from '../core/allowlist/pathArg';

const HELP = `dumbwaiter ${APP_VERSION}: run allowlisted operations for a sandboxed agent, through a spool folder

Usage: dumbwaiter COMMAND [options]

  init                                   create the home (allowlist, keys, ledger) and the spool
  daemon                                 run the host in the foreground until Ctrl-C / SIGTERM
  keys create NAME --out FILE [--scope read|write] [--ops a,b] [--force]
  keys list | keys revoke KEY_ID | keys rotate KEY_ID --out FILE [--force]
  resolve ID --succeeded|--failed [--note TEXT]
                                         settle a run left uncertain by a host crash
  status                                 daemon, allowlist, queue, running, uncertain, keys
  audit [QUERY] [--kind K] [--id ID] [--limit N]
                                         search the audit log (every word must match)

Every command takes --home DIR (else $DUMBWAITER_HOME, else the app's data folder) and
--spool DIR (else $DUMBWAITER_SPOOL, else the home's setting); commands that read state take --json.
`;

function service(values: { home?: string; spool?: string }): HostService {
  return new HostService(resolveHomeDir(values.home), values.spool ?? process.env.DUMBWAITER_SPOOL);
}

function spoolFlag(values: { spool?: string }): string | undefined {
  return values.spool ?? process.env.DUMBWAITER_SPOOL;
}

function cmdInit(argv: string[]): void {
  const { values } = parse(argv, {});
  const r = initHome(resolveHomeDir(values.home), spoolFlag(values), defaultSpoolDir());
  if (values.json) return printJson({ home: r.home.root, spool: r.spool.root, created: r.created });
  console.log(`Home:  ${r.home.root}   (private: allowlist.yaml, settings.json, ledger.sqlite, logs/)`);
  console.log(`Spool: ${r.spool.root}   (share this folder with the sandbox)`);
  console.log(r.created.length ? `Created: ${r.created.map((p) => path.basename(p)).join(', ')}` : 'Everything was already in place.');
  console.log(`Next:  edit ${r.home.allowlist}, then
       dumbwaiter keys create my-sandbox --out ./my-sandbox.key.json
       dumbwaiter daemon`);
}

async function cmdDaemon(argv: string[]): Promise<void> {
  const { values } = parse(argv, {});
  const d = await Daemon.start({ homeDir: resolveHomeDir(values.home), spoolDir: spoolFlag(values), command: `dumbwaiter daemon (pid ${process.pid})` });
  const ops = d.allowlist.get().operations.size;
  console.error(`Dumbwaiter daemon running: spool ${d.spool.root}, ${ops} operation${ops === 1 ? '' : 's'}. Ctrl-C stops it.`);
  await new Promise<void>((resolve) => {
    const stop = (sig: string) => {
      console.error(`${sig}: stopping (running work gets ${d.settings.shutdown_grace_s} s to finish)`);
      void d.stop().then(resolve);
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
}

function keyRows(keys: ReturnType<HostService['listKeys']>): string[][] {
  return [
    ['KEY_ID', 'NAME', 'SCOPE', 'OPS', 'STATE', 'LAST USED'],
    ...keys.map((k) => [k.key_id, k.name, k.scope, k.ops ? k.ops.join(',') : '(all)', k.revoked_at ? `revoked ${ago(k.revoked_at)}` : 'active', ago(k.last_used_at)]),
  ];
}

function refuseOverwrite(file: string, force: boolean): void {
  if (existsSync(file) && !force) throw new UserError(`${file} exists; pass --force to overwrite it`);
}

function warnIfInSpool(svc: HostService, file: string): void {
  if (svc.spoolDir && isInside(svc.spoolDir, file)) {
    console.error(`note: ${file} is inside the spool: anything that can read the spool can use this key.`);
  }
}

function cmdKeys(argv: string[]): void {
  const [sub, ...rest] = argv;
  const { values, positionals } = parse(rest, {
    scope: { type: 'string', default: 'read' },
    ops: { type: 'string' },
    out: { type: 'string' },
    force: { type: 'boolean', default: false },
  });
  const svc = service(values);
  try {
    const actor = cliActor();
    switch (sub) {
      case 'create': {
        const name = positionals[0];
        if (!name || !values.out) throw new UsageError('usage: dumbwaiter keys create NAME --out FILE [--scope read|write] [--ops a,b]');
        const out = path.resolve(values.out);
        const ops = values.ops ? values.ops.split(',').map((s) => s.trim()).filter(Boolean) : null;
        refuseOverwrite(out, values.force);
        const key = svc.createKey(name, values.scope as Scope, ops, actor);
        svc.writeKeyFile(key, out);
        warnIfInSpool(svc, out);
        if (values.json) return printJson({ key_id: key.key_id, name: key.name, scope: key.scope, ops: key.ops, file: out });
        console.log(`Created key ${key.key_id} ("${name}", ${key.scope}${ops ? `, ops ${ops.join(',')}` : ''}).`);
        console.log(`Key file: ${out} (mode 0600). Give it to the sandbox; it is shown only this once.`);
        return;
      }
      case 'list': {
        const keys = svc.listKeys();
        if (values.json) return printJson(keys);
        if (keys.length === 0) return console.log('No keys yet. Create one with: dumbwaiter keys create NAME --out FILE');
        return printTable(keyRows(keys));
      }
      case 'revoke': {
        const id = positionals[0];
        if (!id) throw new UsageError('usage: dumbwaiter keys revoke KEY_ID');
        const changed = svc.revokeKey(id, actor);
        if (values.json) return printJson({ key_id: id, revoked: true, changed });
        return console.log(changed ? `Revoked ${id}: its requests are now rejected (revoked_key).` : `${id} was already revoked.`);
      }
      case 'rotate': {
        const id = positionals[0];
        if (!id || !values.out) throw new UsageError('usage: dumbwaiter keys rotate KEY_ID --out FILE');
        const out = path.resolve(values.out);
        refuseOverwrite(out, values.force);
        const fresh = svc.rotateKey(id, actor);
        svc.writeKeyFile(fresh, out);
        warnIfInSpool(svc, out);
        if (values.json) return printJson({ old_key_id: id, key_id: fresh.key_id, file: out });
        return console.log(`Rotated ${id} -> ${fresh.key_id} (the old key is revoked). New key file: ${out}`);
      }
      default:
        throw new UsageError('usage: dumbwaiter keys create|list|revoke|rotate ...');
    }
  } finally {
    svc.close();
  }
}

function cmdResolve(argv: string[]): void {
  const { values, positionals } = parse(argv, {
    succeeded: { type: 'boolean', default: false },
    failed: { type: 'boolean', default: false },
    note: { type: 'string', default: '' },
  });
  const id = positionals[0];
  if (!id || values.succeeded === values.failed) throw new UsageError('usage: dumbwaiter resolve ID --succeeded|--failed [--note TEXT]');
  const svc = service(values);
  try {
    const row = svc.resolve(id, values.succeeded ? 'succeeded' : 'failed', values.note, cliActor());
    if (values.json) return printJson({ id, state: row.state, resolved_by: row.resolved_by, note: row.note });
    console.log(`${id} resolved as ${row.state}.`);
  } finally {
    svc.close();
  }
}

function cmdStatus(argv: string[]): void {
  const { values } = parse(argv, {});
  const svc = service(values);
  try {
    const s = svc.status();
    if (values.json) return printJson(s);
    const d = s.daemon;
    console.log(`Daemon:    ${d.running ? `running${d.holder ? ` (pid ${d.holder.pid}, since ${d.holder.started_at})` : ''}` : 'not running'}; last heartbeat ${ago(d.heartbeat_at)}`);
    console.log(`Home:      ${s.home}`);
    console.log(`Spool:     ${s.spool ?? '(none set)'}`);
    console.log(`Allowlist: ${s.allowlist.ok ? `ok, ${s.allowlist.operations.length} operations (${s.allowlist.operations.join(', ') || 'none'})` : `INVALID\n${s.allowlist.error}`}`);
    const c = s.requests;
    console.log(`Requests:  ${['queued', 'awaiting_approval', 'running', 'uncertain', 'succeeded', 'failed', 'rejected', 'expired'].map((k) => `${k} ${c[k as keyof typeof c] ?? 0}`).join(', ')}`);
    for (const r of s.running) console.log(`  running   ${r.id}  ${r.op}  since ${r.started_at} (pid ${r.pid ?? '?'})`);
    for (const r of s.uncertain) console.log(`  UNCERTAIN ${r.id}  ${r.op}: dumbwaiter resolve ${r.id} --succeeded|--failed`);
    console.log(`Keys:      ${s.keys.active} active, ${s.keys.revoked} revoked`);
  } finally {
    svc.close();
  }
}

function cmdAudit(argv: string[]): void {
  const { values, positionals } = parse(argv, {
    kind: { type: 'string' },
    id: { type: 'string' },
    limit: { type: 'string', default: '50' },
  });
  const limit = Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError('--limit must be a positive whole number');
  const svc = service(values);
  try {
    const rows = svc.searchAudit({ text: positionals.join(' '), kind: values.kind, requestId: values.id, limit });
    if (values.json) return printJson(rows);
    if (rows.length === 0) return console.log('No matching audit entries.');
    for (const r of rows.reverse()) {
      console.log(`${r.at}  ${r.kind.padEnd(16)} ${r.request_id ?? '-'}  ${r.actor}: ${r.message}`);
    }
  } finally {
    svc.close();
  }
}

const COMMANDS: Record<string, (argv: string[]) => void | Promise<void>> = {
  init: cmdInit,
  daemon: cmdDaemon,
  keys: cmdKeys,
  resolve: cmdResolve,
  status: cmdStatus,
  audit: cmdAudit,
};

export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  if (!cmd || cmd === 'help' || cmd === '--help' || cmd === '-h') {
    process.stdout.write(HELP);
    return cmd ? 0 : 2;
  }
  if (cmd === '--version' || cmd === 'version') {
    console.log(APP_VERSION);
    return 0;
  }
  const run = COMMANDS[cmd];
  if (!run) {
    console.error(`dumbwaiter: unknown command "${cmd}"\n\n${HELP}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(HELP);
    return 0;
  }
  try {
    await run(rest);
    return 0;
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`dumbwaiter ${cmd}: ${e.message}`);
      return 2;
    }
    if (e instanceof UserError) {
      console.error(`dumbwaiter ${cmd}: ${e.message}`);
      return 1;
    }
    throw e;
  }
}
