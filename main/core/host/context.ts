// What every concern of the host's faces (the command line, the app's IPC) works on: the home's core,
// and the spool a command acts on when it names none.
import { HostCore } from '../hostCore';
import { UserError } from '../errors';
import { DEFAULT_SPOOL } from '../../../shared/protocol/ids';
import { spoolForCommand } from '../spool/registry';
import { homeAsOwner, type SpoolOwner } from '../spool/marker';
import { readHomeAllowlist, type HomeAllowlist } from '../allowlist/homeFile';
import type { Allowlist } from '../allowlist/types';
import type { Settings, SpoolEntry } from '../settings';

export class HostContext {
  /** `spoolFlag`: --spool (a name or a folder), checked at once: an unknown one is an error. */
  constructor(
    readonly core: HostCore,
    private readonly spoolFlag?: string,
  ) {
    spoolForCommand(this.settings, spoolFlag);
  }

  /** The settings as the file says now (see HostCore.settings). */
  get settings(): Settings {
    return this.core.settings;
  }

  /** The spool commands act on (keys create, inbox, the spool folder's check): --spool, else `default`,
   *  else the only one; null when none is (a removed --spool, or several spools and no `default`). */
  get spool(): SpoolEntry | null {
    try {
      return spoolForCommand(this.settings, this.spoolFlag);
    } catch {
      return null;
    }
  }

  /** The spool commands act on, or why there is none. */
  requireSpool(): SpoolEntry {
    if (this.spool) return this.spool;
    throw new UserError(`this home has several spools and none named "${DEFAULT_SPOOL}": pass --spool NAME (dumbwaiter spools list)`);
  }

  /** This home, as a spool's marker names the home that serves it (spool/marker.ts). */
  get owner(): SpoolOwner {
    return homeAsOwner(this.core.home.root, this.settings);
  }

  /** The allowlist file as a daemon would load it now, or why it is refused. */
  allowlistFile(): HomeAllowlist {
    return readHomeAllowlist(this.core.home.allowlist, this.core.allowlistContext);
  }

  /** The allowlist as a daemon would load it now, or none when it is refused (status says why). */
  allowlistOrEmpty(): Allowlist {
    const file = this.allowlistFile();
    return file.ok ? file.allowlist : { version: 1, operations: new Map(), disabled: new Map(), context: this.core.allowlistContext };
  }

  /** Tells the daemon that the ledger or the settings changed (after the commit). */
  wake(): void {
    this.core.wake();
  }
}
