// The renderer under test: the built pages in real headless Chromium (browser.ts says which one),
// driven by playwright-core, served with the app's CSP, talking over the IPC contract to the real core
// in this process (bindIpc + createIpcHandlers on a Host), with a real daemon on a temporary
// home and spool. The page gets the same createApi() the preload builds; events come from the real StatusFeed.
// Every screen state a test photographs is also checked with axe-core, in light and in dark.
import { createServer, type Server } from 'node:http';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { vi } from 'vitest';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { buildRenderer } from '../../scripts/build-app';
import { CSP } from '../../main/electron/constants';
import { bindIpc, trustWindows, type IpcEventLike, type WindowRole } from '../../main/core/ipc/bind';
import { createIpcHandlers } from '../../main/core/ipc/handlers';
import { Host } from '../../main/core/host/host';
import { StatusFeed } from '../../main/core/app/statusFeed';
import { scopedLogger } from '../../main/core/log';
import { eventChannel } from '../../shared/ipc/channels';
import { IPC_PREFIX, type ChannelName, type EventName, type IpcEvents } from '../../shared/ipc/contract';
import { TestHost, type DaemonProcess } from '../helpers/host';
import { testBrowser } from './browser';

// expect.poll waits as long as a locator does (its own default, 1 s, is too short on a busy CI
// machine); set here, once, for every file that drives the renderer.
vi.setConfig({ expect: { poll: { timeout: 30_000 } } });

const ROOT = path.resolve(import.meta.dirname, '../..');
export const ARTIFACTS = path.join(ROOT, 'test', 'artifacts');
const FEED_MS = 150;
/** axe-core, served beside the pages: the page's CSP (script-src 'self') refuses an inline script. */
const AXE_FILE = 'axe.min.js';

let built: Promise<string> | null = null;
/** The renderer (development build: React's warnings show up as console errors) and the test preload. */
function buildPages(): Promise<string> {
  built ??= (async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'dw-ui-'));
    await Promise.all([
      buildRenderer(dir, false),
      build({ entryPoints: [path.join(import.meta.dirname, 'pagePreload.ts')], outfile: path.join(dir, 'test-preload.js'), bundle: true, platform: 'browser', format: 'iife', logLevel: 'error' }),
    ]);
    copyFileSync(createRequire(import.meta.url).resolve(`axe-core/${AXE_FILE}`), path.join(dir, AXE_FILE));
    return dir;
  })();
  return built;
}

const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.png': 'image/png' };

/** Serves the built pages the way the app:// protocol does: our files only, with the app's CSP. */
function serve(dir: string): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    const name = path.basename(new URL(req.url ?? '/', 'http://x').pathname);
    try {
      const body = readFileSync(path.join(dir, name));
      res.writeHead(200, { 'content-type': TYPES[path.extname(name)] ?? 'application/octet-stream', 'content-security-policy': CSP });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, origin: `http://127.0.0.1:${(server.address() as { port: number }).port}` })));
}

/** The text of the elements that describe a control (aria-describedby). */
export async function description(control: Locator): Promise<string> {
  const ids = ((await control.getAttribute('aria-describedby')) ?? '').split(' ').filter(Boolean);
  const texts = await Promise.all(ids.map((id) => control.page().locator(`[id="${id}"]`).textContent()));
  return texts.join(' ');
}

export interface UiOptions {
  allowlist: string;
  settings?: Record<string, unknown>;
  /** Start the real daemon (default true). */
  daemon?: boolean;
}

export class Ui {
  /** Console errors, page errors and failed requests: every test expects none. */
  readonly errors: string[] = [];
  /** What the (stand-in) OS folder picker and save dialog answer next. */
  pickedFolder: string | null = null;
  savePath: string | null = null;
  /** How the (stand-in) native confirmation answers, and what it was asked. */
  confirmAnswer = true;
  readonly confirmations: { title: string; message: string; detail: string }[] = [];
  /** How often the page had main open the logs folder (app.openLogs), and what the OS answers next. */
  logsOpened = 0;
  openLogsProblem: string | null = null;
  daemon: DaemonProcess | null = null;
  /** Which of the app's windows the page is (by the page open() loaded): its IPC channels follow it. */
  private window: WindowRole = 'main';
  private feedTimer: NodeJS.Timeout | null = null;

  private constructor(
    readonly host: TestHost,
    readonly svc: Host,
    readonly page: Page,
    private readonly browser: Browser,
    private readonly server: Server,
    readonly origin: string,
  ) {}

  static async start(opts: UiOptions): Promise<Ui> {
    const dir = await buildPages();
    const { executablePath, env } = await testBrowser();
    // Whatever fails on the way (no browser, a daemon that does not start), what was started is stopped.
    const started: (() => unknown)[] = [];
    try {
      const browser = await chromium.launch({
        executablePath,
        env: { ...process.env, ...env },
        args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
      });
      started.push(() => browser.close());
      const host = new TestHost(opts.allowlist, opts.settings);
      started.push(() => host.cleanup());
      const daemon = opts.daemon === false ? null : await host.startDaemon();
      const svc = new Host(host.home, host.spool);
      started.push(() => svc.close());
      const { server, origin } = await serve(dir);
      started.push(() => server.close());
      const context = await browser.newContext({ viewport: { width: 1200, height: 800 }, colorScheme: 'light', acceptDownloads: true });
      const page = await context.newPage();
      const ui = new Ui(host, svc, page, browser, server, origin);
      ui.daemon = daemon;
      await ui.connect(dir);
      return ui;
    } catch (e) {
      for (const stop of started.reverse()) await Promise.resolve().then(stop).catch(() => {});
      throw e;
    }
  }

  /** Main's side of the IPC contract, the test preload and the status feed, for a new page. */
  private async connect(dir: string): Promise<void> {
    const { page, svc, origin } = this;
    // Main's side of the contract, exactly as the app registers it: sender check and schema validation.
    const channels = new Map<string, (event: IpcEventLike, ...args: unknown[]) => unknown>();
    const handlers = createIpcHandlers(svc, 'app', {
      pickFolder: async () => this.pickedFolder,
      pickSavePath: async () => this.savePath,
      confirm: async ({ title, message, detail }) => (this.confirmations.push({ title, message, detail }), this.confirmAnswer),
      openLogs: async () => (this.logsOpened++, this.openLogsProblem),
    });
    // The page plays the window open() last loaded it as: each window has its web contents id.
    const ids: Record<WindowRole, number> = { main: 1, approval: 2 };
    bindIpc({ handle: (c, l) => void channels.set(c, l) }, handlers, trustWindows(origin, (id) => (id === ids.main ? 'main' : id === ids.approval ? 'approval' : null)), scopedLogger('ui-test'));
    await page.exposeFunction('__dwInvoke', async (channel: string, arg: unknown) => {
      const handler = channels.get(channel);
      if (!handler) throw new Error(`No handler registered for '${channel}'`);
      return handler({ sender: { id: ids[this.window] }, senderFrame: { url: page.url() } }, ...(arg === undefined ? [] : [arg]));
    });
    await page.addInitScript({ path: path.join(dir, 'test-preload.js') });

    page.on('console', (m) => {
      if (m.type() === 'error') this.errors.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => this.errors.push(`page: ${e.message}`));
    page.on('requestfailed', (r) => this.errors.push(`request failed: ${r.url()}`));

    const feed = new StatusFeed(svc, (event, payload) => {
      this.emit(event, payload).catch(() => {
        /* the page is between loads: the next poll sends the state again */
      });
    });
    this.feedTimer = setInterval(() => feed.poll(), FEED_MS);
  }

  /** Sends one of the contract's events to the page, as main does. */
  async emit<E extends EventName>(event: E, payload: IpcEvents[E]): Promise<void> {
    await this.page.evaluate(([c, p]) => window.__dwEmit(c as string, p), [eventChannel(event), payload] as const);
  }

  /** Holds the page's calls of `name` until the returned release() lets them through, so that a test
   *  sees what the page shows while the host has not answered yet. Lasts until the page loads again. */
  async holdChannel(name: ChannelName): Promise<() => Promise<void>> {
    const channel = IPC_PREFIX + name;
    await this.page.evaluate((held) => {
      const w = window as unknown as { __dwInvoke: (c: string, a: unknown) => Promise<unknown>; __dwRelease?: Record<string, () => void> };
      const invoke = w.__dwInvoke;
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      (w.__dwRelease ??= {})[held] = open;
      w.__dwInvoke = async (c, a) => {
        if (c === held) await gate;
        return invoke(c, a);
      };
    }, channel);
    return () => this.page.evaluate((held) => (window as unknown as { __dwRelease: Record<string, () => void> }).__dwRelease[held]!(), channel);
  }

  /** Opens the main window at a route (e.g. '/keys'), or another page ('approval.html#<id>'). */
  async open(route: string, pageFile = 'index.html'): Promise<void> {
    const url = `${this.origin}/${pageFile}#${route}`;
    // Always a fresh page load, like a new window: going to the same page with another hash would
    // keep the previous test's state.
    if (this.page.url().split('#')[0] === url.split('#')[0]) await this.page.goto('about:blank');
    this.window = pageFile === 'approval.html' ? 'approval' : 'main';
    await this.page.goto(url);
    await this.page.waitForSelector('#root > *');
    // The main window has started once it shows the host's state (its shortcuts are on from then).
    if (pageFile === 'index.html') await this.page.getByRole('navigation', { name: 'Screens' }).getByRole('status').first().waitFor();
  }

  /** Screenshots of the page, in light and in dark, into test/artifacts/: the screen, without the
   *  toasts confirming what the test just did. Each is checked with axe-core first (colours differ
   *  between the schemes, so both are): any violation fails the test, listed, once both are taken. */
  async screenshots(name: string): Promise<void> {
    mkdirSync(ARTIFACTS, { recursive: true });
    const dismiss = this.page.getByRole('button', { name: 'Dismiss' });
    while ((await dismiss.count()) > 0) await dismiss.first().click({ timeout: 1000 }).catch(() => {});
    const violations: string[] = [];
    for (const colorScheme of ['light', 'dark'] as const) {
      await this.page.emulateMedia({ colorScheme });
      await this.page.screenshot({ path: path.join(ARTIFACTS, `${name}-${colorScheme}.png`) });
      violations.push(...(await this.axe()).map((v) => `${colorScheme}: ${v}`));
    }
    await this.page.emulateMedia({ colorScheme: 'light' });
    if (violations.length > 0) throw new Error(`axe-core finds ${violations.length} violation(s) in "${name}":\n${violations.join('\n')}`);
  }

  /** axe-core's violations on the page as it is, one line per element: rule, impact, target, why. */
  private async axe(): Promise<string[]> {
    if (!(await this.page.evaluate(() => 'axe' in window))) await this.page.addScriptTag({ url: `${this.origin}/${AXE_FILE}` });
    const results = await this.page.evaluate(() => (window as unknown as { axe: typeof import('axe-core') }).axe.run(document, { resultTypes: ['violations'] }));
    return results.violations.flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact ?? 'no impact'}) at ${JSON.stringify(n.target)}: ${n.failureSummary ?? v.help}`));
  }

  async close(): Promise<void> {
    if (this.feedTimer) clearInterval(this.feedTimer);
    await this.browser.close().catch(() => {});
    this.server.close();
    this.svc.close();
    await this.host.cleanup();
  }
}
