// The daemon's parts for one home, driven directly, without a daemon process: a home made by initHome,
// its HostCore (the real ledger), the runner (runs start in this process) and intake for the home's
// spool, over real files. For the unit tests of intake and the runner.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { initHome } from '../../main/core/setup';
import { HostCore } from '../../main/core/hostCore';
import { Runner } from '../../main/core/daemon/runner';
import { intakeClaimed, type IntakeDeps, type IntakeOutcome } from '../../main/core/daemon/intake';
import type { Refusal } from '../../main/core/daemon/refusals';
import { IN_PROCESS } from '../../main/core/exec/keeper';
import { ResultWriter } from '../../main/core/spool/results';
import type { SpoolPaths } from '../../main/core/spool/layout';
import { parseAllowlist } from '../../main/core/allowlist/load';
import { allowlistFor } from '../../main/core/allowlist/forSpool';
import type { Allowlist } from '../../main/core/allowlist/types';
import { writeSettings, type Settings } from '../../main/core/settings';
import { keyFileOf, type KeyInfo } from '../../main/core/keys/keyStore';
import type { RequestRow } from '../../main/core/ledger/requests';
import { scopedLogger } from '../../main/core/log';
import { DEFAULT_SPOOL } from '../../shared/protocol/ids';
import type { KeyFile } from '../../shared/protocol/types';
import { envelope, type SubmitOptions } from './host';

/** An operation that runs without asking (read) and one that always asks (write). */
export const GREET_AND_DEPLOY = `version: 1
operations:
  - name: greet
    command: [/bin/echo, hello, "{name}"]
    args:
      name: {type: string, max_length: 40}
    scope: read
  - name: deploy
    command: [/bin/echo, deploy, "{target}"]
    args:
      target: {type: string, enum: [staging, production]}
    scope: write
    approval: always
`;

export class CoreParts {
  readonly root = mkdtempSync(path.join(os.tmpdir(), 'dw-parts-'));
  readonly spool: SpoolPaths;
  readonly core: HostCore;
  readonly runner: Runner;
  /** Refusals before authentication, as intake hands them to the scan. */
  readonly refusals: Refusal[] = [];
  private allowlist: Allowlist;
  /** Waiters for a change of the ledger (the core tells its daemon hook after each). */
  private readonly waiters = new Set<() => void>();

  constructor(allowlistYaml = GREET_AND_DEPLOY) {
    const home = path.join(this.root, 'home');
    this.spool = initHome(home, path.join(this.root, 'spool'), path.join(this.root, 'unused')).spool;
    this.core = HostCore.open(home);
    this.allowlist = this.parse(allowlistYaml);
    const { core } = this;
    this.runner = new Runner({
      db: core.db,
      spools: () => [DEFAULT_SPOOL],
      spoolDirs: () => this.spool,
      requests: core.requests,
      audit: core.audit,
      keys: core.keys,
      grants: core.grants,
      flags: core.flags,
      lifecycle: core.lifecycle,
      reconciler: core.reconciler,
      allowlist: () => this.allowlist,
      settings: () => core.settings,
      log: scopedLogger('runner'),
      starter: IN_PROCESS,
      safely: (_name, fn) => fn(),
    });
    core.attach({
      wake: () => {},
      changed: () => this.waiters.forEach((w) => w()),
      cancelRequested: () => this.runner.cancelRequested(),
      safely: (_name, fn) => fn(),
      allowlist: () => this.allowlist,
    });
  }

  private parse(yaml: string): Allowlist {
    return parseAllowlist(yaml, 'allowlist.yaml', { spools: this.core.settings.spools, home: this.core.home.root });
  }

  /** The allowlist from now on (as the daemon's, once its file changed). */
  setAllowlist(yaml: string): void {
    this.allowlist = this.parse(yaml);
  }

  /** The settings file with `changes` (read again by the core at its next use). */
  setSettings(changes: Partial<Settings>): void {
    writeSettings(this.core.home.settings, { ...this.core.settings, ...changes });
  }

  /** A key of the spool: as the host has it, and its key file as the sandbox has it. */
  key(scope: 'read' | 'write' = 'write', name = 'agent'): { info: KeyInfo; file: KeyFile } {
    const made = this.core.keys.create(name, scope);
    return { info: this.core.keys.get(made.key_id)!, file: keyFileOf(made) };
  }

  /** Intake's parts for the spool, as its server builds them. */
  intake(): IntakeDeps {
    const { core } = this;
    return {
      db: core.db,
      spool: DEFAULT_SPOOL,
      paths: this.spool,
      keys: core.keys,
      requests: core.requests,
      audit: core.audit,
      lifecycle: core.lifecycle,
      results: new ResultWriter(DEFAULT_SPOOL, this.spool, core.requests, (k) => core.keys.signer(k)),
      log: scopedLogger('intake'),
      grants: core.grants,
      decisions: core.decisions,
      allowlist: () => allowlistFor(this.allowlist, DEFAULT_SPOOL),
      settings: () => core.settings,
      maxRequestAgeMs: () => core.settings.max_request_age_s * 1000,
      refused: (r) => this.refusals.push(r),
      runs: this.runner,
    };
  }

  /** Puts `content` in claimed/ as `<id>.json` (as a scan claims a file) and takes it in. */
  takeFile(id: string, content: string, recovering = false): IntakeOutcome {
    const file = path.join(this.spool.claimed, `${id}.json`);
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
    await this.runner.stop(10_000, new Promise(() => {}));
    this.core.close();
    rmSync(this.root, { recursive: true, force: true });
  }
}
