// The IPC contract end to end without Electron's binary: main's registration (sender check, schema
// validation) on a stand-in ipcMain, the handlers on a real host service (temporary home, real SQLite),
// and the preload's API built from the contract over a transport to them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CHANNEL_NAMES, EVENT_NAMES, IPC_PREFIX, ipcContract } from '../../../../shared/ipc/contract';
import { bindIpc, trustWindows, type IpcEventLike } from '../../../../main/core/ipc/bind';
import { RENDERER_ERRORS_PER_MINUTE, createIpcHandlers, type AppEdges } from '../../../../main/core/ipc/handlers';
import { createApi, type DumbwaiterApi } from '../../../../preload/api';
import { eventChannel } from '../../../../shared/ipc/channels';
import { Host } from '../../../../main/core/host/host';
import { initHome } from '../../../../main/core/setup';
import { scopedLogger, useLogSink } from '../../../../main/core/log';
import { RENDERER_ERROR_MAX } from '../../../../shared/ipc/channels';

const ORIGIN = 'app://dumbwaiter';
/** Web contents ids of the app's two windows, as the Electron layer tells them apart. */
const MAIN = 1;
const APPROVAL = 2;
const roleOf = (id: number) => (id === MAIN ? 'main' : id === APPROVAL ? 'approval' : null);
const OURS: IpcEventLike = { sender: { id: MAIN }, senderFrame: { url: `${ORIGIN}/index.html` } };

/** The desktop's dialogs, standing in for a person who says yes to every question. */
const opened: string[] = [];
const yesToAll: AppEdges = { pickFolder: async () => null, pickSavePath: async () => null, confirm: async () => true, openLogs: async () => (opened.push('logs'), null) };

let dir: string;
let svc: Host;
let registered: Map<string, (event: IpcEventLike, ...args: unknown[]) => unknown>;
let api: DumbwaiterApi;
const warnings: string[] = [];
const listeners = new Map<string, Set<(p: unknown) => void>>();

beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'dw-ipc-'));
  initHome(path.join(dir, 'home'), path.join(dir, 'spool'), path.join(dir, 'spool'));
  svc = new Host(path.join(dir, 'home'));
  registered = new Map();
  const log = { ...scopedLogger('ipc-test'), warn: (...m: unknown[]) => void warnings.push(m.join(' ')) } as ReturnType<typeof scopedLogger>;
  bindIpc({ handle: (channel, listener) => void registered.set(channel, listener) }, createIpcHandlers(svc, 'app', yesToAll), trustWindows(ORIGIN, roleOf), log);
  api = createApi({
    invoke: async (channel, arg) => registered.get(channel)!(OURS, arg),
    on(channel, listener) {
      const set = listeners.get(channel) ?? new Set();
      listeners.set(channel, set.add(listener));
      return () => void set.delete(listener);
    },
  });
});

afterAll(() => {
  svc.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the contract', () => {
  it("names a request by the host's handle: its id in default, <id>@<spool> in another spool", () => {
    const get = ipcContract['requests.get'].request;
    expect(get.safeParse({ id: 'run-tests-1' }).success).toBe(true);
    expect(get.safeParse({ id: 'run-tests-1@work' }).success).toBe(true);
    for (const bad of ['run-tests-1@', 'run-tests-1@Work', 'run@a@b', '@work', '../x']) expect(get.safeParse({ id: bad }).success, bad).toBe(false);
  });

  it('every channel has a schema and a registered handler, under the prefix', () => {
    expect(CHANNEL_NAMES.length).toBeGreaterThan(20);
    for (const c of CHANNEL_NAMES) {
      expect(typeof ipcContract[c].request.safeParse).toBe('function');
      expect(registered.has(IPC_PREFIX + c)).toBe(true);
    }
    expect(registered.size).toBe(CHANNEL_NAMES.length);
  });

  it('registration fails when a handler is missing', () => {
    const handlers = { ...createIpcHandlers(svc) } as Record<string, unknown>;
    delete handlers['keys.rotate'];
    expect(() => bindIpc({ handle: () => {} }, handlers as never, () => true, scopedLogger('x'))).toThrow('no handler for IPC channel keys.rotate');
  });
});

describe('calls', () => {
  it('drops a call from any sender but our own windows, and logs it', async () => {
    const main = { id: MAIN };
    const strangers = [
      { sender: main, senderFrame: { url: 'https://evil.example/index.html' } },
      { sender: main, senderFrame: { url: 'file:///etc/passwd' } },
      { sender: main, senderFrame: { url: 'app://evil/index.html' } },
      { sender: main, senderFrame: { url: 'other://dumbwaiter/index.html' } },
      { sender: main, senderFrame: { url: 'not a url' } },
      { sender: main, senderFrame: null },
      // Our own page's URL, but from a web contents that is none of our windows, or from no sender.
      { sender: { id: 99 }, senderFrame: { url: `${ORIGIN}/index.html` } },
      { sender: null, senderFrame: { url: `${ORIGIN}/index.html` } },
      { senderFrame: { url: `${ORIGIN}/index.html` } },
      {},
    ];
    for (const event of strangers) await expect(registered.get(`${IPC_PREFIX}keys.list`)!(event)).rejects.toThrow('refused');
    expect(warnings.filter((w) => w.includes('untrusted sender')).length).toBe(strangers.length);
  });

  it.each([
    ['its own page', `${ORIGIN}/approval.html#req-1`],
    ['the main page (had it navigated there)', `${ORIGIN}/index.html#/keys`],
  ])('the approval window may decide and read, and nothing more, at %s', async (_where, url) => {
    const approvalWindow: IpcEventLike = { sender: { id: APPROVAL }, senderFrame: { url } };
    const call = (channel: string, arg?: unknown) => registered.get(IPC_PREFIX + channel)!(approvalWindow, ...(arg === undefined ? [] : [arg]));
    expect(await call('approvals.list')).toEqual([]);
    expect(await call('status.get')).toMatchObject({ paused: false });
    for (const [channel, arg] of [
      ['keys.list', undefined],
      ['keys.create', { name: 'x', scope: 'write' }],
      ['allowlist.save', { text: '', baseHash: '0'.repeat(64) }],
      ['allowlist.dryRun', { text: '', op: 'x', args: {} }],
      ['spools.add', { name: 'moved', dir: path.join(dir, 'moved') }],
      ['settings.set', { name: 'notifications', value: false }],
      ['app.openLogs', undefined],
    ] as const) {
      await expect(call(channel, arg)).rejects.toThrow('refused');
    }
    expect(svc.keys.list().some((k) => k.name === 'x')).toBe(false);
    expect(existsSync(path.join(dir, 'moved'))).toBe(false);
  });

  it('the main window may call the channels the approval window may not, from our origin', async () => {
    expect(await registered.get(`${IPC_PREFIX}keys.list`)!(OURS)).toEqual([]);
  });

  it('refuses a bad argument before any handler runs', async () => {
    const call = registered.get(`${IPC_PREFIX}keys.create`)!;
    await expect(call(OURS, { name: 'x', scope: 'admin' })).rejects.toThrow('invalid arguments for keys.create');
    await expect(call(OURS, { name: 'x', scope: 'read', extra: 1 })).rejects.toThrow('invalid arguments');
    await expect(call(OURS, 'x')).rejects.toThrow('invalid arguments');
    await expect(registered.get(`${IPC_PREFIX}requests.cancel`)!(OURS, { id: '../../etc' })).rejects.toThrow('invalid arguments');
    await expect(registered.get(`${IPC_PREFIX}status.get`)!(OURS, { sneaky: true })).rejects.toThrow('invalid arguments');
    expect(svc.keys.list()).toEqual([]);
  });

  it('the preload API reaches the real core: keys, settings, status, audit', async () => {
    const created = (await api.keys.create({ name: 'laptop-agent', scope: 'read' }))!;
    expect(created.key).toMatchObject({ name: 'laptop-agent', scope: 'read' });
    expect(created.key).not.toHaveProperty('secret');
    expect(created.keyFile.key_id).toBe(created.key.key_id);
    expect(created.pasteLines).toContain('DUMBWAITER_SPOOL');
    expect((await api.keys.list()).map((k) => k.key_id)).toEqual([created.key.key_id]);
    expect((await api.settings.set({ name: 'approval_timeout_s', value: 600 })).approval_timeout_s).toBe(600);
    await expect(api.settings.set({ name: 'approval_timeout_s', value: -1 })).rejects.toThrow('approval_timeout_s');
    const status = await api.status.get();
    expect(status.keys.active).toBe(1);
    expect(status.allowlist.ok).toBe(true);
    const audit = await api.audit.search({ text: 'laptop-agent' });
    expect(audit[0]).toMatchObject({ kind: 'key_created', actor: 'app' });
    expect((await api.host.setPaused({ paused: true })).changed).toBe(true);
    expect((await api.status.get()).paused).toBe(true);
  });

  it('the allowlist editor calls refuse an invalid save and never overwrite an outside edit', async () => {
    const current = await api.allowlist.read();
    expect(current.check.ok).toBe(true);
    const bad = await api.allowlist.save({ text: 'version: 1\noperations: [{name: x}]\n', baseHash: current.hash });
    expect(bad).toMatchObject({ saved: false, reason: 'invalid' });
    const stale = await api.allowlist.save({ text: current.text, baseHash: '0'.repeat(64) });
    expect(stale).toMatchObject({ saved: false, reason: 'changed_outside' });
    const ok = await api.allowlist.save({ text: current.text + '\n# edited in the app\n', baseHash: current.hash });
    expect(ok).toMatchObject({ saved: true });
    expect((await api.allowlist.read()).text).toContain('# edited in the app');
    expect((await api.allowlist.validate({ text: 'version: 2\n' })).problems[0]).toMatchObject({ line: 1, field: 'version' });
  });

  it('writes a notice to the sandbox inbox, one copy per active key', async () => {
    svc.keys.create('sandbox', 'read', null, 'test');
    const active = svc.keys.list().filter((k) => !k.revoked_at).length;
    const copies = await api.inbox.send({ text: 'Please stop retrying the deploy.' });
    expect(copies).toHaveLength(active);
    for (const m of copies) expect(m).toMatchObject({ kind: 'notice', text: 'Please stop retrying the deploy.' });
  });
});

describe('events', () => {
  it('each event has an onX that returns its unsubscribe', () => {
    const seen: unknown[] = [];
    const off = api.state.onChanged((s) => seen.push(s));
    expect(typeof api.approval.onRequested).toBe('function');
    expect(typeof api.run.onFinished).toBe('function');
    for (const l of listeners.get(eventChannel('state.changed')) ?? []) l({ paused: true });
    off();
    for (const l of listeners.get(eventChannel('state.changed')) ?? []) l({ paused: false });
    expect(seen).toEqual([{ paused: true }]);
    expect(EVENT_NAMES.map(eventChannel).every((c) => c.startsWith(IPC_PREFIX))).toBe(true);
  });
});

describe("the page's error reports and the logs folder", () => {
  const report = (arg: unknown) => registered.get(`${IPC_PREFIX}app.reportError`)!(OURS, arg);

  it('refuses a report over its bounds, of another kind, or with more fields, before anything is logged', async () => {
    const logged: string[] = [];
    useLogSink({ accepts: () => true, write: (_l, scope, text) => void (scope === 'renderer' && logged.push(text)) });
    try {
      await expect(report({ kind: 'error', message: 'x'.repeat(RENDERER_ERROR_MAX.message + 1) })).rejects.toThrow('invalid arguments for app.reportError');
      await expect(report({ kind: 'error', message: 'm', stack: 'x'.repeat(RENDERER_ERROR_MAX.stack + 1) })).rejects.toThrow('invalid arguments');
      await expect(report({ kind: 'fatal', message: 'm' })).rejects.toThrow('invalid arguments');
      await expect(report({ kind: 'error', message: 'm', level: 'info' })).rejects.toThrow('invalid arguments');
      await expect(report('m')).rejects.toThrow('invalid arguments');
      expect(logged).toEqual([]);
    } finally {
      useLogSink(null);
    }
  });

  it('logs what a report says escaped, as an error of the page, and at most so many a minute', async () => {
    const logged: { level: string; text: string }[] = [];
    useLogSink({ accepts: () => true, write: (level, scope, text) => void (scope === 'renderer' && logged.push({ level, text })) });
    // A fresh set of handlers: the minute's count starts at zero.
    const handlers = createIpcHandlers(svc, 'app', yesToAll);
    try {
      handlers['app.reportError']({ kind: 'error', message: 'boom', stack: 'Error: boom\x1b]0;owned\x07\n[2030-01-01 00:00:00.000] [info] forged' });
      expect(logged).toEqual([{ level: 'error', text: String.raw`uncaught error in the page: Error: boom\x1b]0;owned\x07` + '\n    [2030-01-01 00:00:00.000] [info] forged' }]);
      for (let i = 0; i < RENDERER_ERRORS_PER_MINUTE + 10; i++) handlers['app.reportError']({ kind: 'unhandledrejection', message: `r${i}`, stack: '' });
      expect(logged).toHaveLength(RENDERER_ERRORS_PER_MINUTE);
      expect(logged.at(-1)!.text).toBe(`unhandled rejection in the page: r${RENDERER_ERRORS_PER_MINUTE - 2}`);
    } finally {
      useLogSink(null);
    }
  });

  it('opens the logs folder through the desktop edge; headless there is none', async () => {
    expect(await api.app.openLogs()).toBeNull();
    expect(opened).toEqual(['logs']);
    await expect(Promise.resolve(createIpcHandlers(svc)['app.openLogs'](undefined))).rejects.toThrow('only the desktop app has a logs folder');
  });
});
