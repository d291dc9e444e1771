// The host as its faces hold it (the command line, the app's IPC handlers, the tray): each concern's
// calls, grouped, over one home's core. Every call works whether or not a daemon runs; after a change
// the daemon must act on, it is told (HostCore.wake).
import { HostCore } from '../hostCore';
import { HostContext } from './context';
import { HostKeys } from './keys';
import { Spools } from './spools';
import { AllowlistEditing } from './allowlistEditing';
import { Verdicts } from './verdicts';
import { Inbox } from './inbox';
import { HostSettings } from './settings';
import { Status } from './status';
import { RequestReads, type AuditReads } from './requests';

export class Host {
  readonly context: HostContext;
  readonly keys: HostKeys;
  readonly spools: Spools;
  readonly allowlist: AllowlistEditing;
  readonly verdicts: Verdicts;
  readonly inbox: Inbox;
  readonly settings: HostSettings;
  readonly status: Status;
  readonly requests: RequestReads;
  readonly audit: AuditReads;
  /** Whether this host opened its core (and so closes it). */
  private readonly ownsCore: boolean;

  /** `home`: the home's core, shared with a daemon of this process (the app); or the home's folder, for
   *  a core of this host's own (the command line). `spoolFlag`: --spool, the spool commands act on. */
  constructor(home: HostCore | string, spoolFlag?: string) {
    this.ownsCore = typeof home === 'string';
    const core = typeof home === 'string' ? HostCore.open(home) : home;
    try {
      this.context = new HostContext(core, spoolFlag); // an unknown --spool is an error at once
    } catch (e) {
      if (this.ownsCore) core.close();
      throw e;
    }
    this.keys = new HostKeys(this.context);
    this.spools = new Spools(this.context, this.keys);
    this.allowlist = new AllowlistEditing(this.context);
    this.verdicts = new Verdicts(this.context);
    this.inbox = new Inbox(this.context);
    this.settings = new HostSettings(this.context);
    this.status = new Status(this.context, this.spools, this.verdicts);
    this.requests = new RequestReads(this.context);
    this.audit = core.audit;
  }

  get core(): HostCore {
    return this.context.core;
  }

  close(): void {
    if (this.ownsCore) this.core.close();
  }
}
