// The home's spools as a person manages them (`dumbwaiter spools`, `config set spool`, the app's
// spools.* and catalog.get): one folder per sandbox, added, adopted from another home, moved, checked
// and removed. A running daemon serves a change within a tick.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { homePaths } from '../home';
import { visible } from '../../../shared/text/visible';
import { UserError } from '../errors';
import { readSettings, writeSettings, type SpoolEntry } from '../settings';
import { DEFAULT_SPOOL } from '../../../shared/protocol/ids';
import { newSpoolProblem, resolveSpool, withoutSpool } from '../spool/registry';
import { spoolAllowlistProblem, spoolParentProblem } from '../spool/folderChecks';
import { probeOptions, probeSpool } from '../spool/probe';
import { checkSpool, spoolPaths, spoolPlaceRefusal, spoolRefusal } from '../spool/layout';
import { readCatalog, readHeartbeat } from '../spool/hostFiles';
import { ownerRefusal, readSpoolOwner, writeSpoolMarker } from '../spool/marker';
import { initHome } from '../setup';
import { isLocked, whileStopped } from '../daemon/lock';
import { NO_CONTEXT } from '../allowlist/roots';
import { readHomeAllowlist } from '../allowlist/homeFile';
import { opVisibleTo, type Operation } from '../allowlist/types';
import type { ProbeReport } from '../../../shared/protocol/probe';
import type { SpoolInfo } from '../../../shared/ipc/views';
import type { CatalogDoc } from '../../../shared/protocol/types';
import type { HostContext } from './context';
import type { HostKeys } from './keys';

/** A spool folder's check: whether it is a safe, complete spool of this home, and if not, why. */
export interface FolderCheck {
  path: string;
  ok: boolean;
  message: string;
}

export class Spools {
  /** `keys`: a removed spool's keys are revoked through them (their sandbox is told). */
  constructor(
    private readonly ctx: HostContext,
    private readonly keys: HostKeys,
  ) {}

  /** Every spool of the home, with its state. `daemonRunning` and `ops` as the status has them, else
   *  looked up now (the allowlist as the file says). */
  list(daemonRunning = isLocked(this.ctx.core.home.lock), ops: ReadonlyMap<string, Pick<Operation, 'name' | 'spools'>> = this.ctx.allowlistOrEmpty().operations): SpoolInfo[] {
    const { keys, flags, requests, results } = this.ctx.core;
    const all = keys.list();
    return this.ctx.settings.spools.map((s) => {
      const pinned = results.reach(s.name);
      const problem = this.problem(s, daemonRunning);
      const probe = flags.probe(s.name);
      return {
        name: s.name,
        dir: s.dir,
        problem,
        // The daemon serves no mount it finds unusable (SpoolServer.usable): while it serves this one,
        // an "unusable" verdict is from before the fix (its own check passes now), not the spool's state.
        probe: daemonRunning && problem === null && probe?.verdict === 'unusable' ? null : probe,
        keys: all.filter((k) => k.spool === s.name && !k.revoked_at).length,
        open: requests.openInSpool(s.name),
        heartbeat_at: readHeartbeat((pinned?.paths ?? spoolPaths(s.dir)).hostJson).heartbeat_at,
        operations: [...ops.values()].filter((op) => opVisibleTo(op, s.name)).map((op) => op.name),
      };
    });
  }

  /** A running daemon's word (it stopped touching the spool, and why); else our own check of the folder,
   *  as a stopped daemon's word may be stale (it checks again when it starts). */
  private problem(spool: SpoolEntry, daemonRunning: boolean): string | null {
    if (daemonRunning) return this.ctx.core.flags.spoolProblem(spool.name);
    const c = this.checkFolder(spool.dir);
    return c.ok ? null : c.message;
  }

  /** A new spool for another sandbox: its folder created safely (new or empty, apart from the other
   *  spools and the home; its missing parents only with `parents`), with its clients. A running daemon
   *  starts serving it within a tick. */
  add(name: string, dir: string, actor: string, parents = false): SpoolInfo {
    const problem = this.addProblem(name, dir, parents);
    if (problem) throw new UserError(problem);
    const { home, audit } = this.ctx.core;
    initHome(home.root, path.resolve(dir), path.resolve(dir), name, { parents });
    audit.record({ kind: 'spool_added', actor, spool: name, message: `${actor} added spool ${name} at ${path.resolve(dir)}` });
    this.ctx.wake();
    return this.list().find((s) => s.name === name)!;
  }

  /**
   * The hand-over of a spool another home serves (`spools adopt`): spool `name` of this home from now
   * on, and refused to `fromHome`, the home its marker names (by its folder or its id). Only while that
   * home's daemon is stopped: its lock is held meanwhile, so it cannot start halfway. That home keeps
   * the spool in its list (and its keys) until `spools remove` there; its daemon no longer serves it.
   */
  adopt(name: string, dir: string, fromHome: string, actor: string): SpoolInfo {
    const { home, audit } = this.ctx.core;
    const abs = path.resolve(dir);
    const owner = readSpoolOwner(abs);
    const self = this.ctx.owner;
    if (!owner || owner.home_id === self.home_id) throw new UserError(`spool ${abs} is served by no other home: add it with dumbwaiter spools add ${name} '${abs}'`);
    const from = homePaths(path.resolve(fromHome));
    const fromId = existsSync(from.settings) ? readSettings(from.settings).host_id : null;
    if (fromId !== owner.home_id && (fromId !== null || from.root !== owner.home)) {
      throw new UserError(`spool ${abs} is served by the home ${visible(owner.home)} (id ${visible(owner.home_id)}), not by ${from.root}: name that one with --from-home`);
    }
    const problem = this.namingProblem(name, abs) ?? spoolAllowlistProblem(this.ctx.settings, home, name, abs);
    if (problem) throw new UserError(problem);
    whileStopped(from.lock, from.lockInfo, `the daemon of ${from.root}`, () => {
      writeSpoolMarker(abs, self);
      initHome(home.root, abs, abs, name);
    });
    audit.record({ kind: 'spool_added', actor, spool: name, message: `${actor} took spool ${name} at ${abs} over from the home ${from.root}` });
    this.ctx.wake();
    return this.list().find((s) => s.name === name)!;
  }

  /**
   * Why spool `name` cannot be added at `dir`, or null: namingProblem's reasons, then a folder that
   * cannot be made there (missing parents, unless `parents`), cannot be a spool (what is on the disk
   * there) or lies within an operation's reach.
   */
  addProblem(name: string, dir: string, parents = false): string | null {
    return this.namingProblem(name, dir) ?? spoolParentProblem(dir, parents) ?? spoolRefusal(dir, this.ctx.owner) ?? spoolAllowlistProblem(this.ctx.settings, this.ctx.core.home, name, dir);
  }

  /**
   * Why spool `name` cannot be added at `dir`, from the name and the path's text alone (the app asks
   * this before its question; what is on the disk only after it, so that a page cannot learn what
   * exists): a name in use, or one whose removed spool's requests are still in the ledger (the
   * results sweep would write them into the new folder, for another sandbox to read); a path that is
   * relative, the root, holds the user's home, or overlaps Dumbwaiter's home or another spool.
   */
  namingProblem(name: string, dir: string): string | null {
    const s = this.ctx.settings;
    const taken = s.spools.find((x) => x.name === name);
    if (taken) return `there is already a spool named "${name}" (${taken.dir})`;
    const history = this.ctx.core.requests.countInSpool(name);
    if (history > 0) {
      return `a removed spool named "${name}" still has ${history} request${history === 1 ? '' : 's'} in the ledger (they leave it after retention_ledger_days, ${s.retention_ledger_days} days): give the new spool another name`;
    }
    return spoolPlaceRefusal(dir) ?? newSpoolProblem(s, this.ctx.core.home.root, name, dir);
  }

  /** Why spool `name` cannot be removed now, or null (the app asks this before its question). */
  removeProblem(name: string): string | null {
    if (!this.ctx.settings.spools.some((s) => s.name === name)) return `there is no spool named "${name}" (dumbwaiter spools list)`;
    const open = this.ctx.core.requests.openInSpool(name);
    if (open > 0) {
      return `spool ${name} has ${open} open request${open === 1 ? '' : 's'} (queued, waiting, running or uncertain): settle or cancel them first (dumbwaiter status); if its sandbox keeps sending more, revoke its keys first`;
    }
    const naming = this.allowlistNaming(name);
    return naming.length ? `the allowlist lists spool ${name} for ${naming.join(', ')}: remove it from their spools first` : null;
  }

  /** The operations whose `spools:` name this spool, as the file says (read without the home's
   *  context: a name it does not know, or a root it refuses, must not hide that an operation names it). */
  private allowlistNaming(spool: string): string[] {
    const read = readHomeAllowlist(this.ctx.core.home.allowlist, NO_CONTEXT);
    if (!read.ok) return []; // an allowlist that does not load names nothing the daemon uses
    return [...read.allowlist.operations.values()].filter((op) => op.spools?.includes(spool)).map((op) => op.name);
  }

  /**
   * Takes a spool out of the home (see removeProblem for when not). Its keys are revoked (their
   * sandbox is told), so no later spool of that name takes them over; its folder is left as it is.
   */
  remove(name: string, actor: string): { name: string; dir: string; keys: number } {
    const problem = this.removeProblem(name);
    if (problem) throw new UserError(problem);
    const { home, flags, results, audit } = this.ctx.core;
    const entry = resolveSpool(this.ctx.settings, name);
    const keys = this.keys.list(name).filter((k) => !k.revoked_at);
    for (const k of keys) this.keys.revoke(k.key_id, actor);
    writeSettings(home.settings, withoutSpool(readSettings(home.settings), name));
    flags.forgetSpool(name); // wakes the daemon
    results.forget(name);
    const revoked = keys.length ? `; its ${keys.length === 1 ? 'key was' : `${keys.length} keys were`} revoked` : '';
    audit.record({ kind: 'spool_removed', actor, spool: name, message: `${actor} removed spool ${name} (${entry.dir}; the folder was left as it is${revoked})` });
    return { name, dir: entry.dir, keys: keys.length };
  }

  /** Probes a spool's mount now (spool/probe.ts) and keeps the verdict for `status` and the app. */
  async probe(name: string): Promise<ProbeReport> {
    const entry = resolveSpool(this.ctx.settings, name);
    const pinned = this.ctx.core.results.reach(name);
    const root = path.resolve(entry.dir);
    const report = await probeSpool({ name, root, paths: pinned?.paths ?? spoolPaths(root), home: this.ctx.core.home.root }, probeOptions(this.ctx.settings));
    this.ctx.core.flags.setProbe(name, report);
    return report;
  }

  /** Whether `dir` (by default the spool commands act on) is a safe, complete spool of this home, and if not, why. */
  checkFolder(dir = this.ctx.spool?.dir ?? null): FolderCheck {
    if (!dir) return { path: '', ok: false, message: 'No spool folder is set: choose one.' };
    const abs = path.resolve(dir);
    try {
      checkSpool(abs);
      const foreign = ownerRefusal(abs, this.ctx.owner);
      if (foreign) return { path: abs, ok: false, message: foreign };
      return { path: abs, ok: true, message: 'Private to you and complete.' };
    } catch (e) {
      if (e instanceof UserError) return { path: abs, ok: false, message: e.message };
      throw e;
    }
  }

  /**
   * Moves the spool commands act on (else `default`) to `dir` (absolute), created safely with its
   * clients in it (its missing parents only with `parents`); refused for a folder holding files the
   * host did not write. A running daemon serves it there within its rescan interval (one started with
   * --spool, from its next start).
   */
  use(dir: string, actor: string, parents = false): FolderCheck {
    if (!path.isAbsolute(dir)) throw new UserError(`${dir} is a relative path: give the spool folder's full path`);
    const abs = path.resolve(dir);
    const name = this.ctx.spool?.name ?? DEFAULT_SPOOL;
    initHome(this.ctx.core.home.root, abs, abs, name, { parents });
    this.ctx.core.audit.record({ kind: 'settings_changed', actor, spool: name, message: `${actor} moved spool ${name} to ${abs}` });
    this.ctx.wake();
    return { ...this.checkFolder(abs), message: `Ready: spool ${name} is now ${abs}. A running host serves it there within seconds; share this folder with its sandbox.` };
  }

  /** A spool's catalog.json as its sandbox sees it; null when it is not a regular file of the catalog's shape. */
  catalog(spool = this.ctx.spool?.name): CatalogDoc | null {
    const pinned = spool ? this.ctx.core.results.reach(spool) : null;
    return pinned ? readCatalog(pinned.paths.catalogJson) : null;
  }
}
