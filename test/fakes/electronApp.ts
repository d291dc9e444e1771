// Runs the desktop app's real main-process bundle (scripts/build-app.ts) in a child Node process, with
// `require('electron')` answered by the stand-in in ./electron.cjs (loaded by ./electron-hook.cjs).
// The stand-in records every call the app makes as JSON lines in a file; this side reads them, waits for
// them, and drives the user's side (ready, a second instance, tray and notification clicks...) with
// commands over the child's IPC channel. Nothing here imports Electron.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, copyFileSync, mkdirSync, openSync, readdirSync, readSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildApp } from '../../scripts/build-app';
import { generateIcons } from '../../scripts/icons';
import { endKeepersOf, sleep } from '../helpers/host';
import { track } from '../helpers/processes';

const ROOT = path.resolve(import.meta.dirname, '../..');
const HOOK = path.join(import.meta.dirname, 'electron-hook.cjs');

/** One recorded call (or event, or command reply) of the stand-in: `api` and its own fields. */
export interface Call {
  seq: number;
  api: string;
  // Loosely typed: each api records its own fields.
  [field: string]: unknown;
}

export interface AppLayout {
  /** resources/app: what app.getAppPath() gives in a packaged app. */
  appDir: string;
  /** The main process's bundle, resources/app/dist/main/index.cjs. */
  main: string;
  /** resources/tray: the tray's icons (process.resourcesPath/tray). */
  trayDir: string;
}

/**
 * The app laid out as electron-builder packages it (electron-builder.yml): package.json and the built
 * dist/ in resources/app, the tray icons in resources/tray. Icons are drawn here, not copied from
 * build/icons, which another test's build may be rewriting.
 */
export async function buildPackagedApp(dir: string): Promise<AppLayout> {
  const resources = path.join(dir, 'resources');
  const appDir = path.join(resources, 'app');
  await buildApp(path.join(appDir, 'dist'));
  copyFileSync(path.join(ROOT, 'package.json'), path.join(appDir, 'package.json'));
  const icons = path.join(dir, 'icons');
  generateIcons(icons);
  const trayDir = path.join(resources, 'tray');
  mkdirSync(trayDir, { recursive: true });
  for (const f of readdirSync(path.join(icons, 'tray')).filter((n) => n.endsWith('.png'))) copyFileSync(path.join(icons, 'tray', f), path.join(trayDir, f));
  return { appDir, main: path.join(appDir, 'dist', 'main', 'index.cjs'), trayDir };
}

export interface StartOptions {
  /** The app's home (DUMBWAITER_HOME). */
  home: string;
  /** The user's home folder (HOME, and ~/.config): the default spool is ~/Dumbwaiter/spool in it. */
  userHome: string;
  /** Where the stand-in records the calls. */
  logFile: string;
  /** Wait for the `ready` command instead of becoming ready once the main script has run. */
  manualReady?: boolean;
  /** Another instance holds Electron's single-instance lock. */
  secondInstance?: boolean;
  /** safeStorage's Linux backend ('basic_text': no keyring), or 'none' (no encryption at all). */
  keychain?: string;
}

/** The app's main process, running under the stand-in. */
export class AppProcess {
  private static readonly started = new Set<AppProcess>();
  readonly proc: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** What the process wrote to stdout and stderr (for failure messages). */
  output = '';
  private readonly recorded: Call[] = [];
  private offset = 0;
  private partial = '';
  private nextCommand = 0;

  constructor(
    layout: AppLayout,
    private readonly o: StartOptions,
  ) {
    const env: NodeJS.ProcessEnv = { ...process.env };
    // Plain Node, as Electron runs the bundle: no loader of this test run, no IPC channel of its worker.
    for (const k of ['NODE_OPTIONS', 'NODE_CHANNEL_FD', 'NODE_CHANNEL_SERIALIZATION_MODE', 'DUMBWAITER_SPOOL', 'XDG_CONFIG_HOME']) delete env[k];
    Object.assign(env, {
      HOME: o.userHome,
      XDG_CONFIG_HOME: path.join(o.userHome, '.config'),
      DUMBWAITER_HOME: o.home,
      // better-sqlite3 stays outside the bundle: a packaged app has it in its own node_modules.
      NODE_PATH: path.join(ROOT, 'node_modules'),
      DW_FAKE_ELECTRON_LOG: o.logFile,
      DW_FAKE_ELECTRON_APP_PATH: layout.appDir,
      DW_FAKE_ELECTRON_PACKAGED: '1',
      ...(o.manualReady ? { DW_FAKE_ELECTRON_READY: 'manual' } : {}),
      ...(o.secondInstance ? { DW_FAKE_ELECTRON_SINGLE_INSTANCE: 'taken' } : {}),
      ...(o.keychain ? { DW_FAKE_ELECTRON_KEYCHAIN: o.keychain } : {}),
    });
    // Electron's main process only warns about an unhandled rejection; Node would crash.
    this.proc = track(spawn(process.execPath, ['--unhandled-rejections=warn', '--require', HOOK, layout.main], {
      cwd: layout.appDir,
      env,
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    }));
    this.proc.stdout!.on('data', (c: Buffer) => (this.output += c.toString()));
    this.proc.stderr!.on('data', (c: Buffer) => (this.output += c.toString()));
    this.exited = new Promise((resolve) => this.proc.on('exit', (code, signal) => resolve({ code, signal })));
    this.proc.on('error', (e) => (this.output += `\n[spawn error] ${e.message}`));
    AppProcess.started.add(this);
  }

  get pid(): number {
    return this.proc.pid!;
  }

  get running(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** Every call recorded so far, in order (optionally of one api). */
  calls(api?: string): Call[] {
    this.readNew();
    return api ? this.recorded.filter((c) => c.api === api) : [...this.recorded];
  }

  last(api: string, match: (c: Call) => boolean = () => true): Call | undefined {
    return this.calls(api).filter(match).at(-1);
  }

  private readNew(): void {
    let fd: number;
    try {
      fd = openSync(this.o.logFile, 'r');
    } catch {
      return; // nothing recorded yet
    }
    try {
      const size = statSync(this.o.logFile).size;
      if (size <= this.offset) return;
      const buf = Buffer.alloc(size - this.offset);
      const n = readSync(fd, buf, 0, buf.length, this.offset);
      this.offset += n;
      const text = this.partial + buf.subarray(0, n).toString('utf8');
      const lines = text.split('\n');
      this.partial = lines.pop() ?? ''; // a line still being written
      for (const line of lines) if (line) this.recorded.push(JSON.parse(line) as Call);
    } finally {
      closeSync(fd);
    }
  }

  /** Waits until `fn` finds something in the calls; fails at once if the process ends first. */
  async waitFor<T>(what: string, fn: (calls: Call[]) => T | undefined, timeoutMs = 30_000): Promise<T> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const v = fn(this.calls());
      if (v !== undefined) return v;
      if (!this.running) {
        const again = fn(this.calls()); // recorded just before the end
        if (again !== undefined) return again;
        throw new Error(`the app ended (${this.proc.exitCode ?? this.proc.signalCode}) before ${what}\n${this.describe()}`);
      }
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}\n${this.describe()}`);
      await sleep(20);
    }
  }

  /** The next call of `api` (after `after`, a seq) that matches. */
  waitCall(api: string, match: (c: Call) => boolean = () => true, after = 0): Promise<Call> {
    return this.waitFor(`a call of ${api}`, (calls) => calls.find((c) => c.api === api && c.seq > after && match(c)));
  }

  /** Sends a command to the stand-in and waits for its reply: the value, or the error it threw. */
  async command(cmd: string, args: Record<string, unknown> = {}): Promise<unknown> {
    const n = ++this.nextCommand;
    this.proc.send({ ...args, n, cmd });
    const reply = await this.waitFor(`the reply to ${cmd}`, (calls) => calls.find((c) => c.api === 'reply' && c.n === n));
    if (!reply.ok) throw new Error(`${cmd}: ${String(reply.error)}`);
    return reply.value;
  }

  /** Waits for the process to end by itself. */
  async exit(timeoutMs = 30_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the app did not end\n${this.describe()}`)), timeoutMs);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  describe(): string {
    const tail = this.calls()
      .slice(-25)
      .map((c) => JSON.stringify(c).slice(0, 300))
      .join('\n');
    return `--- last calls:\n${tail}\n--- output:\n${this.output.slice(-4000)}`;
  }

  /** Ends the app, and the run keeper of its home (which outlives it): a test's folders can then go. */
  async kill(): Promise<void> {
    if (this.running) this.proc.kill('SIGKILL');
    await this.exited;
    await endKeepersOf(this.o.home);
    AppProcess.started.delete(this);
  }

  /** Ends every app process still running (after each test, whatever its outcome). */
  static async killAll(): Promise<AppProcess[]> {
    const all = [...AppProcess.started];
    await Promise.all(all.map((a) => a.kill()));
    return all;
  }
}

/** A tray menu item as the stand-in records it. */
export interface RecordedMenuItem {
  label: string;
  type: string;
  enabled: boolean;
  submenu?: RecordedMenuItem[];
}

const EVIDENCE = path.join(ROOT, 'test', 'artifacts', 'tray');

/**
 * What a person was shown, as the stand-in recorded it: a notification's title, body and buttons and/or
 * the tray's menu, into test/artifacts/tray/<name>.txt (evidence of what each surface offered).
 */
export function writeShown(name: string, notification: { title: string; body: string; actions?: { text: string }[] } | null, menu: RecordedMenuItem[] | null): void {
  const lines = (items: RecordedMenuItem[], depth: number): string[] =>
    items.flatMap((i) => [`${'  '.repeat(depth)}${i.type === 'separator' ? '--------' : i.label}${i.enabled ? '' : '   [disabled]'}`, ...lines(i.submenu ?? [], depth + 1)]);
  const text = [
    ...(notification
      ? ['Notification', `  title: ${notification.title}`, '  body:', ...notification.body.split('\n').map((l) => `    ${l}`), `  buttons: ${(notification.actions ?? []).map((a) => `[${a.text}]`).join(' ')}`, '']
      : []),
    ...(menu ? ['Tray menu', ...lines(menu, 1)] : []),
  ];
  mkdirSync(EVIDENCE, { recursive: true });
  writeFileSync(path.join(EVIDENCE, `${name}.txt`), `${text.join('\n')}\n`);
}
