// The spools a daemon serves, a SpoolServer each: which of the home's spools this home may serve
// (spool/marker.ts), and the set kept in step with the home's list as settings.json changes (a spool
// added is served at once, a removed one no longer, a moved one at its new folder).
import path from 'node:path';
import { UserError } from '../errors';
import type { HomePaths } from '../home';
import type { HostCore } from '../hostCore';
import type { Settings, SpoolEntry } from '../settings';
import { checkSpool, isHostMadeSpool } from '../spool/layout';
import { claimSpool, homeAsOwner, ownerRefusal } from '../spool/marker';
import { SpoolHealth } from '../spool/health';
import { scopedLogger } from '../log';
import { SpoolServer, type SharedParts } from '../spool/server';

const log = scopedLogger('daemon');

/** Why `dir` cannot be served as a spool at all (a link, not ours, open to others), or null. */
function rootProblem(dir: string): string | null {
  try {
    checkSpool(path.resolve(dir), { rootOnly: true });
    return null;
  } catch (e) {
    if (e instanceof UserError) return e.message;
    throw e;
  }
}

/**
 * Why a daemon of `home` cannot start on `spools`, or null. Only the folders a human chose are checked,
 * and the start is refused only when none of them can be a spool: what is inside, the sandbox can break
 * at any time, and a spool that cannot be used waits for its fix (said in the log, status and the app)
 * while the others are served. A spool another home serves is never touched: none left to serve, no start.
 */
export function noSpoolToServe(home: HomePaths, settings: Settings, spools: SpoolEntry[]): string | null {
  const self = homeAsOwner(home.root, settings);
  const refused = spools.map((s) => rootProblem(s.dir) ?? ownerRefusal(path.resolve(s.dir), self));
  return refused.every((r) => r !== null) ? refused.join('\n') : null;
}

type FromCore = 'db' | 'keys' | 'requests' | 'audit' | 'flags' | 'lifecycle' | 'grants' | 'decisions';

/** What each spool's server is handed: the home's core, and the daemon's own parts (`own`). */
export function sharedParts(core: HostCore, own: Omit<SharedParts, FromCore | 'spoolResults' | 'maxRequestAgeMs'>): SharedParts {
  const { db, keys, requests, audit, flags, lifecycle, grants, decisions } = core;
  return { db, keys, requests, audit, flags, lifecycle, grants, decisions, spoolResults: core.results, maxRequestAgeMs: () => own.settings().max_request_age_s * 1000, ...own };
}

export interface ServedSpoolsDeps {
  home: HomePaths;
  settings: () => Settings;
  /** --spool: the one spool served, whatever the home's list says later; else every spool, as it changes. */
  onlySpool: string | undefined;
  shared: SharedParts;
  safely: (name: string, fn: () => void) => void;
}

export class ServedSpools {
  /** The spools served, by name. */
  readonly servers = new Map<string, SpoolServer>();

  constructor(
    private readonly d: ServedSpoolsDeps,
    first: SpoolEntry[],
  ) {
    for (const entry of first) if (this.mayServe(entry)) this.servers.set(entry.name, new SpoolServer(entry, d.shared));
  }

  /** Whether this home may serve spool `entry` (spool/marker.ts). One another home serves is not
   *  touched at all (said in the log, the audit log and status, like any spool problem); one that names
   *  no home (made by an earlier version) is taken, and that is said. */
  private mayServe(entry: SpoolEntry): boolean {
    const root = path.resolve(entry.dir);
    const self = homeAsOwner(this.d.home.root, this.d.settings());
    const refused = ownerRefusal(root, self);
    if (refused) {
      new SpoolHealth(entry.name, this.d.shared.audit, scopedLogger(`spool ${entry.name}`), this.d.shared.flags).setProblem(refused);
      return false;
    }
    // Its server says what is wrong and waits for the fix; a folder the host did not make a spool gets no marker.
    if (rootProblem(root) !== null || !isHostMadeSpool(root)) return true;
    try {
      if (claimSpool(root, self)) log.warn(`spool ${entry.name} (${root}) named no home (an earlier version made it): this home serves it from now on, and other homes are refused it`);
    } catch (e) {
      log.warn(`spool ${entry.name}: its marker cannot be written (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): other homes are not refused it yet`);
    }
    return true;
  }

  /** Spools added to the home are served at once, and removed ones no longer (`spools remove` refuses
   *  while one has open requests, so nothing of theirs runs). A moved spool is served at its new folder.
   *  False when the set does not follow the home's list (--spool). */
  sync(): boolean {
    if (this.d.onlySpool !== undefined) return false;
    const wanted = new Map(this.d.settings().spools.map((e) => [e.name, e]));
    for (const [name, server] of this.servers) {
      const entry = wanted.get(name);
      if (entry && path.resolve(entry.dir) === server.plain.root) continue;
      this.servers.delete(name);
      log.info(`no longer serving spool ${name} (${server.plain.root})`);
      void server.stop().then(() => server.close());
      if (!entry) this.d.safely(`requests of spool ${name}`, () => this.cancelOpenOf(name));
    }
    for (const entry of wanted.values()) {
      if (this.servers.has(entry.name) || !this.mayServe(entry)) continue;
      const server = new SpoolServer(entry, this.d.shared);
      this.servers.set(entry.name, server);
      log.info(`serving spool ${entry.name} (${server.plain.root})`);
      server.start();
      void server.runProbe().catch((e: Error) => log.error(`probe of spool ${entry.name}: ${e.stack ?? String(e)}`));
    }
    return true;
  }

  /** `spools remove` refuses while a spool has open requests, but one may have been claimed since its
   *  check: with its spool gone it could never be answered, so it is cancelled, not left open. */
  private cancelOpenOf(spool: string): void {
    for (const row of this.d.shared.requests.openOf(spool)) this.d.shared.decisions.cancel(row.id, `daemon (spool ${spool} was removed)`);
  }
}
