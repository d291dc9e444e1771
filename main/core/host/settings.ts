// The host's settings and its pause, as a person changes them (`dumbwaiter config|pause|resume`, the
// app's settings.* and host.setPaused). A running daemon picks a change up at once.
import { readSettings, writeSettings, withSetting, type Settings } from '../settings';
import type { HostContext } from './context';

export class HostSettings {
  constructor(private readonly ctx: HostContext) {}

  /** The settings file as it is now (an invalid one is an error, said as such). */
  get(): Settings {
    return readSettings(this.ctx.core.home.settings);
  }

  /** Changes one setting (validated as a whole); a running daemon picks it up at once. */
  set(name: string, value: unknown, actor: string): Settings {
    const before = this.get();
    const next = withSetting(before, name, value);
    writeSettings(this.ctx.core.home.settings, next);
    this.ctx.wake();
    this.ctx.core.audit.record({
      kind: 'settings_changed',
      actor,
      message: `${actor} set ${name} to ${JSON.stringify(next[name as keyof Settings])} (was ${JSON.stringify(before[name as keyof Settings])})`,
    });
    return next;
  }

  /** Nothing new starts while paused. Returns false when it already was in that state. */
  setPaused(paused: boolean, actor: string): boolean {
    const changed = this.ctx.core.flags.setPaused(paused);
    if (changed) {
      this.ctx.core.audit.record({ kind: paused ? 'paused' : 'resumed', actor, message: paused ? `host paused by ${actor}: nothing new starts` : `host resumed by ${actor}` });
    }
    return changed;
  }
}
