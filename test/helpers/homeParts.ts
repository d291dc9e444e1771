// The daemon's parts for one home, driven directly, without a daemon process: a home made by initHome
// (its allowlist.yaml and settings.json written), its HostCore (the real ledger), the runner (runs start
// in this process) built as the daemon builds it (runnerDeps), what each spool's server is handed
// (sharedParts), and intake for the default spool, over real files. For the unit tests of intake, the
// runner, the scanner and the spool server.
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { initHome } from '../../main/core/setup';
import { HostCore } from '../../main/core/hostCore';
import { homePaths, type HomePaths } from '../../main/core/home';
import { LedgerRoom } from '../../main/core/ledger/room';
import { Runner } from '../../main/core/daemon/runner';
import { runnerDeps } from '../../main/core/daemon/runnerDeps';
import { sharedParts } from '../../main/core/daemon/servedSpools';
import { intakeClaimed, type IntakeDeps, type IntakeOutcome } from '../../main/core/daemon/intake';
import type { Refusal } from '../../main/core/daemon/refusals';
import { IN_PROCESS } from '../../main/core/exec/keeper';
import { ResultWriter } from '../../main/core/spool/results';
import { spoolPaths, type SpoolPaths } from '../../main/core/spool/layout';
import type { SharedParts } from '../../main/core/spool/server';
import { parseAllowlist } from '../../main/core/allowlist/load';
import { allowlistFor } from '../../main/core/allowlist/forSpool';
import type { Allowlist } from '../../main/core/allowlist/types';
import { readSettings, writeSettings, type Settings } from '../../main/core/settings';
import { keyFileOf, type KeyInfo, type Scope } from '../../main/core/keys/keyStore';
import type { RequestRow } from '../../main/core/ledger/requests';
import { scopedLogger } from '../../main/core/log';
import { DEFAULT_SPOOL } from '../../shared/protocol/ids';
import type { KeyFile } from '../../shared/protocol/types';
import { GREET_AND_DEPLOY } from './allowlists';
import { envelope, type SubmitOptions } from './host';

export class HomeParts {
  readonly root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'dw-parts-')));
  readonly home: HomePaths;
  /** The default spool's folder, and its paths. */
  readonly spool: string;
  readonly io: SpoolPaths;
  readonly core: HostCore;
  readonly runner: Runner;
  readonly room: LedgerRoom;
  /** What the daemon hands each spool's server. */
  readonly shared: SharedParts;
  stopping = false;
  /** What `safely` caught: the daemon logs these and goes on; a test says whether any is expected. */
  readonly caught: string[] = [];
  /** Refusals before authentication, as intake hands them to the scan. */
  readonly refusals: Refusal[] = [];
  /** How often the parts asked the daemon to start what may start, and to read its settings again. */
  pumps = 0;
  reloads = 0;
  private allowlist: Allowlist;
  /** Waiters for a change of the ledger (the core tells its daemon hook after each). */
  private readonly waiters = new Set<() => void>();

  /** `allowlist`: the home's allowlist.yaml; `settings`: changes to its settings.json; `spools`: more
   *  spools of the home, by name. */
  constructor(allowlist = GREET_AND_DEPLOY, settings: Partial<Settings> = {}, spools: string[] = []) {
    const homeDir = path.join(this.root, 'home');
    this.spool = path.join(this.root, 'spool');
    this.io = initHome(homeDir, this.spool, this.spool).spool;
    for (const name of spools) initHome(homeDir, path.join(this.root, name), this.spool, name);
    this.home = homePaths(homeDir);
    this.setSettings(settings);
    this.core = HostCore.open(homeDir);
    this.allowlist = this.parse(allowlist);
    const safely = (name: string, fn: () => void) => {
      try {
        fn();
      } catch (e) {
        this.caught.push(`${name}: ${(e as Error).message}`);
      }
    };
    const { core } = this;
    this.room = new LedgerRoom(this.home.root, { lost: () => {}, back: () => {} }, () => core.audit.writeHeld());
    this.runner = new Runner(
      runnerDeps(core, {
        spools: () => this.settings.spools.map((s) => s.name),
        spoolDirs: (name) => {
          const entry = this.settings.spools.find((s) => s.name === name);
          return entry ? { io: spoolPaths(entry.dir), plain: spoolPaths(entry.dir) } : null;
        },
        allowlist: () => this.allowlist,
        settings: () => this.settings,
        starter: IN_PROCESS,
        safely,
      }),
    );
    this.shared = sharedParts(core, {
      allowlist: () => this.allowlist,
      settings: () => this.settings,
      paused: () => core.flags.paused,
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
    core.attach({
      wake: () => {},
      changed: () => this.waiters.forEach((w) => w()),
      cancelRequested: () => this.runner.cancelRequested(),
      safely,
      allowlist: () => this.allowlist,
    });
  }

  /** The home's settings (settings.json, read again by the core once it changed). */
  get settings(): Settings {
    return this.core.settings;
  }

  /** Writes settings.json with `changes`. */
  setSettings(changes: Partial<Settings>): void {
    writeSettings(this.home.settings, { ...readSettings(this.home.settings), ...changes });
  }

  private parse(yaml: string): Allowlist {
    return parseAllowlist(yaml, this.home.allowlist, { spools: this.settings.spools, home: this.home.root });
  }

  /** The allowlist from now on (as the daemon's, once its file changed). */
  setAllowlist(yaml: string): void {
    writeFileSync(this.home.allowlist, yaml);
    this.allowlist = this.parse(yaml);
  }

  /** A key of `spool`, as its sandbox would hold it. */
  keyFile(name = 'sandbox', scope: Scope = 'write', spool = DEFAULT_SPOOL): KeyFile {
    return keyFileOf(this.core.keys.create(name, scope, null, spool));
  }

  /** A key of the default spool: as the host has it, and its key file as the sandbox has it. */
  key(scope: Scope = 'write', name = 'agent'): { info: KeyInfo; file: KeyFile } {
    const file = this.keyFile(name, scope);
    return { info: this.core.keys.get(file.key_id)!, file };
  }

  /** Intake's parts for the default spool, as its server builds them (`own`: the server's own writer,
   *  log and refusals, else new ones). */
  intake(own: Partial<Pick<IntakeDeps, 'results' | 'log' | 'refused'>> = {}): IntakeDeps {
    const { core } = this;
    return {
      ...this.shared,
      spool: DEFAULT_SPOOL,
      paths: this.io,
      results: own.results ?? new ResultWriter(DEFAULT_SPOOL, this.io, core.requests, (k) => core.keys.signer(k)),
      log: own.log ?? scopedLogger('intake'),
      allowlist: () => allowlistFor(this.allowlist, DEFAULT_SPOOL),
      refused: own.refused ?? ((r) => this.refusals.push(r)),
    };
  }

  /** Puts `content` in claimed/ as `<id>.json` (as a scan claims a file) and takes it in. */
  takeFile(id: string, content: string, recovering = false): IntakeOutcome {
    const file = path.join(this.io.claimed, `${id}.json`);
    writeFileSync(file, content);
    return intakeClaimed(this.intake(), id, file, recovering);
  }

  /** A request of `key` signed as its sandbox would, taken in. */
  take(key: KeyFile, id: string, op: string, args: Record<string, unknown> = {}, o: SubmitOptions = {}): IntakeOutcome {
    return this.takeFile(id, envelope(key, id, op, args, o));
  }

  row(id: string): RequestRow {
    const row = this.core.requests.get(id);
    if (!row) throw new Error(`no request ${id}`);
    return row;
  }

  /** Resolves once request `id` is in one of `states` (looked at after each change the core reports). */
  until(id: string, states: RequestRow['state'][]): Promise<RequestRow> {
    return new Promise((resolve) => {
      const look = () => {
        const row = this.core.requests.get(id);
        if (row && states.includes(row.state)) {
          this.waiters.delete(look);
          resolve(row);
        }
      };
      this.waiters.add(look);
      look();
    });
  }

  /** Waits for what runs to end, then closes the ledger and removes the folders. */
  async close(): Promise<void> {
    this.stopping = true;
    await this.runner.stop(10_000, new Promise(() => {}));
    this.core.close();
    rmSync(this.root, { recursive: true, force: true });
  }
}
