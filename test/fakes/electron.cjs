// A stand-in for the 'electron' module, for running the app's real main-process bundle under plain Node
// (test/fakes/electron-hook.cjs makes `require('electron')` load this file). It has only what
// main/electron/ uses, with Electron's semantics where they matter: 'ready' comes after the main script
// has run, before-quit can be prevented, app.exit ends the process at once, windows, trays and
// notifications cannot be made before 'ready', a destroyed object refuses calls, an app without a
// 'window-all-closed' listener quits when its last window closes.
//
// Every call is recorded as one JSON line appended (synchronously, so nothing is lost when the process
// exits) to the file $DW_FAKE_ELECTRON_LOG. The test drives the user's side (ready, a second instance,
// clicks on the tray, its menu and notifications, answers to message boxes, closing windows, IPC calls
// from a page...) with messages over the Node IPC channel; each command's outcome is recorded as a
// `reply` line.
//
// Environment: DW_FAKE_ELECTRON_LOG (required), DW_FAKE_ELECTRON_READY=manual (wait for the `ready`
// command), DW_FAKE_ELECTRON_SINGLE_INSTANCE=taken (another instance holds the lock),
// DW_FAKE_ELECTRON_KEYCHAIN=<backend>|none (safeStorage; default gnome_libsecret),
// DW_FAKE_ELECTRON_APP_PATH (app.getAppPath(); default the working folder), DW_FAKE_ELECTRON_PACKAGED=1
// (app.isPackaged, and process.resourcesPath is the folder above the app path, as in a packaged app).
/* global require, module, Response, Request */
/* eslint-disable @typescript-eslint/no-require-imports -- plain CommonJS: the child Node loads it as it is */
'use strict';
const { EventEmitter } = require('node:events');
const fs = require('node:fs');
const path = require('node:path');

const LOG = process.env.DW_FAKE_ELECTRON_LOG;
if (!LOG) throw new Error('the Electron stand-in needs DW_FAKE_ELECTRON_LOG');
const opts = {
  manualReady: process.env.DW_FAKE_ELECTRON_READY === 'manual',
  singleInstance: process.env.DW_FAKE_ELECTRON_SINGLE_INSTANCE !== 'taken',
  keychain: process.env.DW_FAKE_ELECTRON_KEYCHAIN || 'gnome_libsecret',
  appPath: path.resolve(process.env.DW_FAKE_ELECTRON_APP_PATH || process.cwd()),
  packaged: process.env.DW_FAKE_ELECTRON_PACKAGED === '1',
};

// ---------------------------------------------------------------------------------------------- record

let seq = 0;
/** What a recorded value looks like: our objects by their ids, functions by a mark, buffers by length. */
function replacer(_key, v) {
  if (typeof v === 'function') return '[function]';
  if (v instanceof BrowserWindow) return { window: v.id };
  if (v instanceof WebContents) return { webContents: v.id };
  if (v instanceof NativeImage) return { image: v.path };
  if (v instanceof Menu) return { menu: v.items };
  if (v && v.type === 'Buffer' && Array.isArray(v.data)) return { buffer: v.data.length };
  if (v instanceof Error) return { error: v.message };
  return v;
}
function record(api, fields = {}) {
  fs.appendFileSync(LOG, JSON.stringify({ seq: ++seq, api, ...fields }, replacer) + '\n');
}

class FakeEvent {
  constructor(fields = {}) {
    Object.assign(this, fields);
    this.defaultPrevented = false;
  }
  preventDefault() {
    this.defaultPrevented = true;
  }
}

/** An EventEmitter whose listener registrations are recorded (which events the layer listens to). */
class Recorded extends EventEmitter {
  constructor(name, id) {
    super();
    this._name = name;
    this._id = id;
    this._inOnce = false;
  }
  _recordListener(how, event) {
    record(`${this._name}.${how}`, { ...(this._id !== undefined ? { id: this._id } : {}), event });
  }
  on(event, listener) {
    if (!this._inOnce) this._recordListener('on', event);
    return super.on(event, listener);
  }
  once(event, listener) {
    this._recordListener('once', event);
    this._inOnce = true; // EventEmitter#once registers through this.on
    try {
      return super.once(event, listener);
    } finally {
      this._inOnce = false;
    }
  }
}

// ------------------------------------------------------------------------------------------------- app

const state = { ready: false, quitting: false, shutdown: false };
let resolveReady;
const readyPromise = new Promise((resolve) => (resolveReady = resolve));

function requireReady(what) {
  if (!state.ready) throw new Error(`${what} cannot be used before the app is ready`);
}

/** Electron's event loop: the process lives until the app quits or exits, not until Node runs dry. */
const mainLoop = setInterval(() => {}, 1 << 30);

function shutdown(code) {
  if (state.shutdown) return;
  state.shutdown = true;
  record('app.shutdown', { code });
  clearInterval(mainLoop);
  setImmediate(() => process.exit(code));
}

class App extends Recorded {
  constructor() {
    super('app');
    this.isPackaged = opts.packaged;
  }
  requestSingleInstanceLock(additionalData) {
    record('app.requestSingleInstanceLock', { additionalData, result: opts.singleInstance });
    return opts.singleInstance;
  }
  hasSingleInstanceLock() {
    return opts.singleInstance;
  }
  whenReady() {
    record('app.whenReady');
    return readyPromise;
  }
  isReady() {
    return state.ready;
  }
  getAppPath() {
    record('app.getAppPath', { result: opts.appPath });
    return opts.appPath;
  }
  /** Only 'logs' (the app's log file goes there): beside the record file, in the test's own folder. */
  getPath(name) {
    if (name !== 'logs') throw new Error(`the stand-in has no app.getPath('${name}')`);
    const result = path.join(path.dirname(LOG), 'app-logs');
    record('app.getPath', { name, result });
    return result;
  }
  setLoginItemSettings(settings) {
    record('app.setLoginItemSettings', { settings });
  }
  /** Like Electron's Browser::Quit: before-quit (preventable), then every window is closed (a close
   *  prevented cancels the quit), then will-quit (preventable) and quit, then the process ends with 0. */
  quit() {
    record('app.quit');
    if (state.quitting || state.shutdown) return;
    const before = new FakeEvent();
    this.emit('before-quit', before);
    record('app.emitted', { event: 'before-quit', defaultPrevented: before.defaultPrevented });
    if (before.defaultPrevented) return;
    state.quitting = true;
    for (const w of BrowserWindow.getAllWindows()) w.close();
    if (BrowserWindow.getAllWindows().length === 0) finishQuit();
    else cancelQuit();
  }
  /** Ends the process now: no before-quit, no will-quit, windows destroyed without their close event. */
  exit(code = 0) {
    record('app.exit', { code });
    state.shutdown = true;
    for (const w of BrowserWindow.getAllWindows()) w._destroy(false);
    process.exit(code);
  }
}

function finishQuit() {
  const will = new FakeEvent();
  app.emit('will-quit', will);
  record('app.emitted', { event: 'will-quit', defaultPrevented: will.defaultPrevented });
  if (will.defaultPrevented) return cancelQuit();
  app.emit('quit', new FakeEvent(), 0);
  shutdown(0);
}

function cancelQuit() {
  state.quitting = false;
  record('app.quitCancelled');
}

const app = new App();

function emitReady() {
  if (state.ready || state.shutdown) return;
  state.ready = true;
  record('app.ready');
  app.emit('ready', new FakeEvent(), {});
  resolveReady();
}
// Electron emits 'ready' once the main script has run (never during it).
if (!opts.manualReady) setImmediate(emitReady);

// ------------------------------------------------------------------------------- dialog, shell, screen

function ownerAndOptions(args) {
  return args[0] instanceof BrowserWindow ? { owner: args[0], options: args[1] } : { owner: null, options: args[0] };
}

/** How the next message boxes are answered (the test's `dialog.answer`), in order: a button's index, or
 *  'hold': the box stays open until the test's `dialog.respond`. */
const messageBoxAnswers = [];
/** Answers the message box held open, if any. */
let respondHeld = null;

const dialog = {
  showErrorBox(title, content) {
    record('dialog.showErrorBox', { title, content });
  },
  /** Unless the test said otherwise, the user dismisses every dialog: the cancel button, no file. */
  async showMessageBox(...args) {
    const { owner, options } = ownerAndOptions(args);
    record('dialog.showMessageBox', { owner, options });
    const answer = messageBoxAnswers.shift();
    const response = answer === 'hold' ? await new Promise((resolve) => (respondHeld = resolve)) : (answer ?? options.cancelId ?? 0);
    record('dialog.answered', { response });
    return { response, checkboxChecked: false };
  },
  async showOpenDialog(...args) {
    const { owner, options } = ownerAndOptions(args);
    record('dialog.showOpenDialog', { owner, options });
    return { canceled: true, filePaths: [] };
  },
  async showSaveDialog(...args) {
    const { owner, options } = ownerAndOptions(args);
    record('dialog.showSaveDialog', { owner, options });
    return { canceled: true, filePath: '' };
  },
};

const shell = {
  async openExternal(url, options) {
    record('shell.openExternal', { url, options });
  },
  /** Opens nothing; answers as Electron does when it could: ''. */
  async openPath(p) {
    record('shell.openPath', { path: p });
    return '';
  },
};

const screen = {
  getPrimaryDisplay() {
    record('screen.getPrimaryDisplay');
    return {
      id: 1,
      bounds: { x: 0, y: 0, width: 1920, height: 1080 },
      workArea: { x: 0, y: 32, width: 1920, height: 1048 },
      size: { width: 1920, height: 1080 },
      workAreaSize: { width: 1920, height: 1048 },
      scaleFactor: 1,
    };
  },
};

// --------------------------------------------------------------------------------- protocol, net, session

const privilegedSchemes = [];
const protocolHandlers = new Map();
const protocol = {
  registerSchemesAsPrivileged(schemes) {
    record('protocol.registerSchemesAsPrivileged', { schemes, afterReady: state.ready });
    if (state.ready) throw new Error('protocol.registerSchemesAsPrivileged should be called before app is ready');
    privilegedSchemes.push(...schemes);
  },
  handle(scheme, handler) {
    record('protocol.handle', { scheme });
    requireReady('protocol.handle');
    if (protocolHandlers.has(scheme)) throw new Error(`Failed to register protocol: ${scheme}`);
    protocolHandlers.set(scheme, handler);
  },
  isProtocolHandled(scheme) {
    return protocolHandlers.has(scheme);
  },
};

const MIME = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.png': 'image/png', '.svg': 'image/svg+xml', '.json': 'application/json' };
const net = {
  /** file: URLs only (the app serves its own files); Electron fails a missing file with a network error. */
  async fetch(input) {
    const url = typeof input === 'string' ? input : input.url;
    record('net.fetch', { url });
    const u = new URL(url);
    if (u.protocol !== 'file:') throw new Error(`the Electron stand-in fetches file: URLs only, not ${url}`);
    const file = decodeURIComponent(u.pathname);
    let body;
    try {
      body = fs.readFileSync(file);
    } catch {
      throw new Error('net::ERR_FILE_NOT_FOUND');
    }
    return new Response(body, { status: 200, headers: { 'Content-Type': MIME[path.extname(file)] ?? 'application/octet-stream' } });
  },
};

const defaultSession = {
  permissionRequestHandler: null,
  permissionCheckHandler: null,
  setPermissionRequestHandler(handler) {
    record('session.setPermissionRequestHandler', { handler });
    this.permissionRequestHandler = handler;
  },
  setPermissionCheckHandler(handler) {
    record('session.setPermissionCheckHandler', { handler });
    this.permissionCheckHandler = handler;
  },
};
const session = {
  get defaultSession() {
    requireReady('session.defaultSession');
    return defaultSession;
  },
};

// ------------------------------------------------------------------------------------------ safeStorage

const SEALED = Buffer.from('v11');
const xor = (b) => Buffer.from(b.map((x) => x ^ 0x5a));
const safeStorage = {
  /** On Linux Electron says false until the app is ready. */
  isEncryptionAvailable() {
    const result = state.ready && opts.keychain !== 'none';
    record('safeStorage.isEncryptionAvailable', { result });
    return result;
  },
  encryptString(text) {
    if (!this.isEncryptionAvailable()) throw new Error('Error while encrypting the text provided to safeStorage.encryptString. Encryption is not available.');
    record('safeStorage.encryptString', { length: text.length });
    return Buffer.concat([SEALED, xor(Buffer.from(text, 'utf8'))]);
  },
  decryptString(buffer) {
    record('safeStorage.decryptString', { length: buffer.length });
    if (!Buffer.isBuffer(buffer)) throw new TypeError('Expected the first argument of decryptString() to be a buffer');
    if (!buffer.subarray(0, SEALED.length).equals(SEALED)) throw new Error('Error while decrypting the ciphertext provided to safeStorage.decryptString.');
    return xor(buffer.subarray(SEALED.length)).toString('utf8');
  },
};
// Electron has it on Linux only.
if (process.platform === 'linux') {
  safeStorage.getSelectedStorageBackend = () => {
    const result = opts.keychain === 'none' ? 'unknown' : opts.keychain;
    record('safeStorage.getSelectedStorageBackend', { result });
    return result;
  };
}

// ------------------------------------------------------------------------------------------ nativeImage

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
class NativeImage {
  constructor(file) {
    this.path = file;
    let empty = true;
    try {
      empty = !path.isAbsolute(file) || !fs.readFileSync(file).subarray(0, PNG.length).equals(PNG);
    } catch {
      /* no such file: an empty image, as Electron gives */
    }
    this._empty = empty;
  }
  isEmpty() {
    return this._empty;
  }
}
const nativeImage = {
  /** Electron returns an empty image (no error) for a missing, relative or unreadable path. */
  createFromPath(file) {
    const image = new NativeImage(file);
    record('nativeImage.createFromPath', { path: file, empty: image.isEmpty() });
    return image;
  },
};

// --------------------------------------------------------------------------------- BrowserWindow, webContents

const windows = new Map();
let nextWindowId = 1;
let nextContentsId = 1;
/** The focused window's id (0: none). */
let focusedId = 0;

function alive(obj, what) {
  if (obj._destroyed) throw new TypeError(`Object has been destroyed (${what})`);
}

class WebContents extends Recorded {
  constructor(win) {
    const id = nextContentsId++;
    super('webContents', id);
    this.id = id;
    this._win = win;
    this._url = '';
    this._destroyed = false;
    this._openHandler = null;
  }
  send(channel, ...args) {
    alive(this, 'webContents.send');
    record('webContents.send', { id: this.id, window: this._win.id, channel, args });
  }
  setWindowOpenHandler(handler) {
    record('webContents.setWindowOpenHandler', { id: this.id });
    this._openHandler = handler;
  }
  getURL() {
    alive(this, 'webContents.getURL');
    return this._url;
  }
  isDestroyed() {
    return this._destroyed;
  }
}

class BrowserWindow extends Recorded {
  constructor(options = {}) {
    requireReady('BrowserWindow');
    const id = nextWindowId++;
    super('BrowserWindow', id);
    this.id = id;
    this._options = options;
    this._destroyed = false;
    this._visible = false;
    this._shownOnce = false;
    this.webContents = new WebContents(this);
    windows.set(id, this);
    record('BrowserWindow.new', { id, webContents: this.webContents.id, options });
    app.emit('web-contents-created', new FakeEvent(), this.webContents);
    if (options.show !== false) this.show();
  }
  static getAllWindows() {
    return [...windows.values()];
  }
  static getFocusedWindow() {
    return windows.get(focusedId) ?? null;
  }
  static fromId(id) {
    return windows.get(id) ?? null;
  }
  /** Resolves once the page has loaded; 'ready-to-show' comes first, once, if the window is not shown. */
  loadURL(url, options) {
    alive(this, 'loadURL');
    record('BrowserWindow.loadURL', { id: this.id, url, options });
    this.webContents._url = url;
    return new Promise((resolve, reject) =>
      setImmediate(() => {
        if (this._destroyed) return reject(new Error('ERR_ABORTED'));
        if (!this._shownOnce && !this._visible) this.emit('ready-to-show');
        this.webContents.emit('did-finish-load');
        resolve();
      }),
    );
  }
  show() {
    alive(this, 'show');
    record('BrowserWindow.show', { id: this.id });
    this._visible = this._shownOnce = true;
    focusedId = this.id;
    this.emit('show');
    this.emit('focus');
  }
  showInactive() {
    alive(this, 'showInactive');
    record('BrowserWindow.showInactive', { id: this.id });
    this._visible = this._shownOnce = true;
    this.emit('show');
  }
  hide() {
    alive(this, 'hide');
    record('BrowserWindow.hide', { id: this.id });
    this._visible = false;
    if (focusedId === this.id) focusedId = 0;
    this.emit('hide');
  }
  focus() {
    alive(this, 'focus');
    record('BrowserWindow.focus', { id: this.id });
    focusedId = this.id;
    this.emit('focus');
  }
  isVisible() {
    alive(this, 'isVisible');
    return this._visible;
  }
  isFocused() {
    return focusedId === this.id;
  }
  isDestroyed() {
    return this._destroyed;
  }
  /** As the user's close button does: 'close' (preventable), then the window is gone. */
  close() {
    if (this._destroyed) return;
    record('BrowserWindow.close', { id: this.id });
    const e = new FakeEvent();
    this.emit('close', e);
    record('BrowserWindow.emitted', { id: this.id, event: 'close', defaultPrevented: e.defaultPrevented });
    if (!e.defaultPrevented) this._destroy(true);
  }
  destroy() {
    record('BrowserWindow.destroy', { id: this.id });
    this._destroy(true);
  }
  _destroy(notify) {
    if (this._destroyed) return;
    this._destroyed = this.webContents._destroyed = true;
    this._visible = false;
    windows.delete(this.id);
    if (focusedId === this.id) focusedId = 0;
    if (!notify) return;
    this.emit('closed');
    this.webContents.emit('destroyed');
    if (windows.size > 0) return;
    if (state.quitting) finishQuit();
    else if (app.listenerCount('window-all-closed') > 0) app.emit('window-all-closed');
    else app.quit(); // Electron's default for an app that does not listen
  }
}

// --------------------------------------------------------------------------------------- Tray and Menu

class MenuItem {
  constructor(options) {
    if (!options.label && !options.role && !options.type) throw new Error('Invalid template for MenuItem: must have at least one of label, role or type');
    this.label = options.label ?? '';
    this.id = options.id ?? '';
    this.type = options.type ?? (options.submenu ? 'submenu' : 'normal');
    this.enabled = options.enabled ?? true;
    this.visible = options.visible ?? true;
    this.click = typeof options.click === 'function' ? options.click : null;
    this.submenu = options.submenu ? (options.submenu instanceof Menu ? options.submenu : Menu.buildFromTemplate(options.submenu)) : null;
  }
  toJSON() {
    return { label: this.label, type: this.type, enabled: this.enabled, ...(this.click ? { click: true } : {}), ...(this.submenu ? { submenu: this.submenu.items } : {}) };
  }
}

class Menu {
  constructor() {
    this.items = [];
  }
  static buildFromTemplate(template) {
    if (!Array.isArray(template)) throw new TypeError('Invalid template for Menu: Menu template must be an array');
    const menu = new Menu();
    menu.items = template.map((o) => new MenuItem(o));
    return menu;
  }
}

const trays = [];
class Tray extends Recorded {
  constructor(image, guid) {
    requireReady('Tray');
    const id = trays.length + 1;
    super('Tray', id);
    if (!(image instanceof NativeImage) && typeof image !== 'string') throw new TypeError('Tray needs an image');
    this.id = id;
    this._destroyed = false;
    this._image = image instanceof NativeImage ? image : new NativeImage(image);
    this._tooltip = '';
    this._menu = null;
    trays.push(this);
    record('Tray.new', { id, image: this._image, empty: this._image.isEmpty(), guid });
  }
  setImage(image) {
    this._alive('setImage');
    this._image = image instanceof NativeImage ? image : new NativeImage(image);
    record('Tray.setImage', { id: this.id, image: this._image, empty: this._image.isEmpty() });
  }
  setToolTip(text) {
    this._alive('setToolTip');
    this._tooltip = text;
    record('Tray.setToolTip', { id: this.id, text });
  }
  setContextMenu(menu) {
    this._alive('setContextMenu');
    if (menu !== null && !(menu instanceof Menu)) throw new TypeError('Tray.setContextMenu takes a Menu or null');
    this._menu = menu;
    record('Tray.setContextMenu', { id: this.id, menu: menu ? menu.items : null });
  }
  destroy() {
    record('Tray.destroy', { id: this.id });
    this._destroyed = true;
  }
  isDestroyed() {
    return this._destroyed;
  }
  _alive(what) {
    if (this._destroyed) throw new Error(`Tray is destroyed (${what})`);
  }
}

// --------------------------------------------------------------------------------------- Notification

const notifications = [];
class Notification extends Recorded {
  static isSupported() {
    record('Notification.isSupported', { result: true });
    return true;
  }
  constructor(options = {}) {
    requireReady('Notification');
    const id = notifications.length + 1;
    super('Notification', id);
    this.id = id;
    this.options = options;
    notifications.push(this);
    record('Notification.new', { id, options });
  }
  show() {
    record('Notification.show', { id: this.id });
    this._shown = true;
  }
  close() {
    record('Notification.close', { id: this.id });
    this.emit('close', new FakeEvent({ reason: 'unknown' }));
  }
}

// --------------------------------------------------------------------------------------------- ipcMain

const ipcHandlers = new Map();
class IpcMain extends Recorded {
  constructor() {
    super('ipcMain');
  }
  handle(channel, listener) {
    record('ipcMain.handle', { channel });
    if (ipcHandlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
    ipcHandlers.set(channel, listener);
  }
  handleOnce(channel, listener) {
    this.handle(channel, async (...a) => {
      ipcHandlers.delete(channel);
      return listener(...a);
    });
  }
  removeHandler(channel) {
    record('ipcMain.removeHandler', { channel });
    ipcHandlers.delete(channel);
  }
}
const ipcMain = new IpcMain();

// ------------------------------------------------------------------------------- the test's commands

function lastTray() {
  const t = trays.filter((x) => !x._destroyed).at(-1);
  if (!t) throw new Error('no tray');
  return t;
}
function windowOf(id) {
  const w = windows.get(id);
  if (!w) throw new Error(`no window ${id}`);
  return w;
}
function notificationOf(id) {
  const n = notifications[id - 1];
  if (!n || !n._shown) throw new Error(`no notification ${id} shown`);
  return n;
}

const commands = {
  ping: () => 'pong',
  ready: () => emitReady(),
  quit: () => app.quit(),
  /** The next message box is answered with the button `response` (an index), or held open ('hold'). */
  'dialog.answer': ({ response }) => void messageBoxAnswers.push(response),
  /** The user clicks button `response` of the message box held open. */
  'dialog.respond': ({ response }) => {
    if (!respondHeld) throw new Error('no message box is held open');
    const respond = respondHeld;
    respondHeld = null;
    respond(response);
  },
  /** What Electron does in the first instance when another one starts. */
  'second-instance': ({ argv = [], cwd = process.cwd() }) => app.emit('second-instance', new FakeEvent(), argv, cwd, {}),
  'tray.click': () => lastTray().emit('click', new FakeEvent(), { x: 0, y: 0, width: 22, height: 22 }, { x: 10, y: 10 }),
  /** A click on the tray's context menu, by the labels leading to the item. `asId`: for this click the item
   *  carries that id instead (Electron lets an item's id change), as an item of a stale menu would. */
  'tray.menu': ({ labels, asId }) => {
    let items = lastTray()._menu?.items ?? [];
    let item = null;
    for (const label of labels) {
      item = items.find((i) => i.label === label && i.visible);
      if (!item) throw new Error(`no menu item "${label}" among ${JSON.stringify(items.map((i) => i.label))}`);
      if (!item.enabled) throw new Error(`the menu item "${label}" is disabled`);
      items = item.submenu?.items ?? [];
    }
    if (!item?.click) throw new Error(`the menu item "${labels.join(' > ')}" does nothing`);
    const own = item.id;
    if (asId !== undefined) item.id = asId;
    try {
      item.click(item, BrowserWindow.getFocusedWindow() ?? undefined, { triggeredByAccelerator: false });
    } finally {
      item.id = own;
    }
  },
  /** A button of a notification (macOS, Windows): Electron gives details first, then the deprecated index. */
  'notification.action': ({ id, index }) => notificationOf(id).emit('action', new FakeEvent({ actionIndex: index, selectionIndex: -1 }), index, -1),
  'notification.click': ({ id }) => notificationOf(id).emit('click', new FakeEvent()),
  /** The user closes a window (its close button). */
  'window.close': ({ id }) => windowOf(id).close(),
  /** A page tries to navigate: whether the app stopped it. */
  'webContents.navigate': ({ id, url }) => {
    const e = new FakeEvent({ url });
    windowOf(id).webContents.emit('will-navigate', e, url, false, true, 0, 0);
    return { prevented: e.defaultPrevented };
  },
  /** A page asks for a new window: what the app's handler answers. */
  'webContents.open': ({ id, url }) => {
    const h = windowOf(id).webContents._openHandler;
    if (!h) throw new Error('no window open handler');
    return h({ url, frameName: '', features: '', disposition: 'new-window', referrer: { url: '', policy: 'default' } });
  },
  /** A page asks for a permission: whether it is granted. */
  'session.permission': ({ id, permission, url }) =>
    new Promise((resolve) => defaultSession.permissionRequestHandler(windowOf(id).webContents, permission, (ok) => resolve(ok), { requestingUrl: url })),
  /** A page calls ipcRenderer.invoke from a frame at `url`, in the window `id` (none: a web contents
   *  that is no window of the app's). */
  'ipc.invoke': async ({ channel, url, id, args = [] }) => {
    const h = ipcHandlers.get(channel);
    if (!h) throw new Error(`No handler registered for '${channel}'`);
    const sender = id === undefined ? { id: 1_000_000 } : windowOf(id).webContents;
    return h(new FakeEvent({ sender, senderFrame: { url }, processId: 1, frameId: 1 }), ...args);
  },
  /** A page loads a URL of a scheme the app handles. */
  'protocol.request': async ({ url }) => {
    const scheme = new URL(url).protocol.slice(0, -1);
    const h = protocolHandlers.get(scheme);
    if (!h) throw new Error(`no handler for ${scheme}:`);
    const res = await h(new Request(url));
    const body = await res.text();
    return { status: res.status, headers: Object.fromEntries(res.headers), body };
  },
};

if (process.send) {
  process.on('message', async (msg) => {
    if (!msg || typeof msg !== 'object' || typeof msg.cmd !== 'string') return;
    try {
      const fn = commands[msg.cmd];
      if (!fn) throw new Error(`unknown command ${msg.cmd}`);
      record('reply', { n: msg.n, cmd: msg.cmd, ok: true, value: (await fn(msg)) ?? null });
    } catch (e) {
      record('reply', { n: msg.n, cmd: msg.cmd, ok: false, error: e instanceof Error ? e.message : String(e) });
    }
  });
  // The test is gone: so is this process (nothing it started may outlive it).
  process.on('disconnect', () => {
    record('process.disconnected');
    process.exit(70);
  });
}
process.on('warning', (w) => record('process.warning', { name: w.name, message: w.message }));
process.on('exit', (code) => record('process.exit', { code }));

// ------------------------------------------------------------------------------------ utilityProcess

/** A plain Node child over an IPC channel (its script then uses process.send, not a parentPort). */
class UtilityProcess extends EventEmitter {
  constructor(modulePath, args, options) {
    super();
    this._child = require('node:child_process').fork(modulePath, args, { cwd: options.cwd, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    this.pid = this._child.pid;
    this._child.on('message', (m) => this.emit('message', m));
    this._child.on('exit', (code, signal) => this.emit('exit', code ?? (signal ? 128 : 1)));
  }
  postMessage(message) {
    this._child.send(message);
  }
  kill() {
    return this._child.kill();
  }
}
const utilityProcess = {
  fork(modulePath, args = [], options = {}) {
    requireReady('utilityProcess.fork');
    record('utilityProcess.fork', { modulePath, options });
    return new UtilityProcess(modulePath, args, options);
  },
};

if (opts.packaged) process.resourcesPath = path.dirname(opts.appPath);

module.exports = { app, BrowserWindow, dialog, ipcMain, Menu, nativeImage, net, Notification, protocol, safeStorage, screen, session, shell, Tray, utilityProcess, webContents: { getAllWebContents: () => [...windows.values()].map((w) => w.webContents) } };
// Electron refuses the screen module before 'ready'.
Object.defineProperty(module.exports, 'screen', {
  enumerable: true,
  get() {
    requireReady('screen');
    return screen;
  },
});
