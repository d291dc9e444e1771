// What the daemon hands each spool's server (SharedParts), built over a real home (initHome) and its
// HostCore, with the real runner (its runs in this process): for unit tests of the spool server and
// the scanner, driven on a real ledger and real files without a daemon process.
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { initHome } from '../../main/core/setup';
import { HostCore } from '../../main/core/hostCore';
import { homePaths, type HomePaths } from '../../main/core/home';
import { LedgerRoom } from '../../main/core/ledger/room';
import { parseAllowlist } from '../../main/core/allowlist/load';
import type { Allowlist } from '../../main/core/allowlist/types';
import { keyFileOf, type Scope } from '../../main/core/keys/keyStore';
import { readSettings, type Settings } from '../../main/core/settings';
import { IN_PROCESS } from '../../main/core/exec/keeper';
import { Runner } from '../../main/core/daemon/runner';
import { sharedParts } from '../../main/core/daemon/servedSpools';
import type { SharedParts } from '../../main/core/spool/server';
import { scopedLogger } from '../../main/core/log';
import type { KeyFile } from '../../shared/protocol/types';

export class HomeParts {
  readonly root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'dw-parts-')));
  readonly home: HomePaths;
  /** The default spool's folder. */
  readonly spool: string;
  readonly core: HostCore;
  readonly runner: Runner;
  readonly room: LedgerRoom;
  readonly shared: SharedParts;
  settings: Settings;
  stopping = false;
  /** What `safely` caught: the daemon logs these and goes on; a test says whether any is expected. */
  readonly caught: string[] = [];
  /** How often the parts asked the daemon to start what may start, and to read its settings again. */
  pumps = 0;
  reloads = 0;

  /** `allowlist`: the home's allowlist.yaml; `spools`: more spools of the home, by name. */
  constructor(allowlist: string, settings: Partial<Settings> = {}, spools: string[] = []) {
    const homeDir = path.join(this.root, 'home');
    this.spool = path.join(this.root, 'spool');
    initHome(homeDir, this.spool, this.spool);
    for (const name of spools) initHome(homeDir, path.join(this.root, name), this.spool, name);
    this.home = homePaths(homeDir);
    writeFileSync(this.home.allowlist, allowlist);
    this.settings = { ...readSettings(this.home.settings), ...settings };
    this.core = HostCore.open(homeDir);
    const { db, keys, requests, audit, flags, lifecycle, grants } = this.core;
    const safely = (name: string, fn: () => void) => {
      try {
        fn();
      } catch (e) {
        this.caught.push(`${name}: ${(e as Error).message}`);
      }
    };
    const read = parseAllowlist(allowlist, this.home.allowlist, { spools: this.settings.spools, home: this.home.root });
    const current = (): Allowlist => read;
    this.room = new LedgerRoom(this.home.root, { lost: () => {}, back: () => {} }, () => audit.writeHeld());
    this.runner = new Runner({
      db,
      spools: () => this.settings.spools.map((s) => s.name),
      spoolDirs: () => null,
      requests,
      audit,
      keys,
      grants,
      flags,
      lifecycle,
      reconciler: this.core.reconciler,
      allowlist: current,
      settings: () => this.settings,
      log: scopedLogger('runner'),
      starter: IN_PROCESS,
      safely,
    });
    this.shared = sharedParts(this.core, {
      allowlist: current,
      settings: () => this.settings,
      paused: () => flags.paused,
      stopping: () => this.stopping,
      reloadSettings: () => void this.reloads++,
      pump: () => {
        this.pumps++;
        this.runner.pump();
      },
      runs: this.runner,
      room: this.room,
      safely,
    });
  }

  /** A key of `spool`, as its sandbox would hold it. */
  key(name = 'sandbox', scope: Scope = 'write', spool = 'default'): KeyFile {
    return keyFileOf(this.core.keys.create(name, scope, null, spool));
  }

  async close(): Promise<void> {
    this.stopping = true;
    await this.runner.stop(0, Promise.resolve());
    this.core.close();
    rmSync(this.root, { recursive: true, force: true });
  }
}
