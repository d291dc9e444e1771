// Several spools in real Chromium against the real host and one real daemon serving both: the spool
// switcher narrows Activity, Approvals, Keys and Audit to one spool's requests, keys and entries, and
// the lists name the spool; Settings > Spools shows each spool's real probe, adds a spool through the
// (stand-in) folder picker after the native question, refuses to remove one with open requests, and
// removes one, leaving its folder.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ui } from './harness';
import { CLI, DaemonProcess, envelope, handleOf, waitForResult, writeQueueFile } from '../helpers/host';
import { track } from '../helpers/processes';
import { keyFileOf } from '../../main/core/keys/keyStore';
import type { KeyFile } from '../../shared/protocol/types';

const ALLOWLIST = `version: 1
operations:
  - name: hello
    description: Say hello
    command: [/bin/echo, "hello {name}"]
    args:
      name: {type: string, max_length: 50}
    scope: read
    approval: never
    timeout_s: 10
  - name: ship
    description: Ship it (asks first)
    command: [/bin/echo, shipped]
    scope: write
    approval: always
    timeout_s: 10
`;

let ui: Ui;
let daemon: DaemonProcess;
let work: string;
let home: KeyFile;
let office: KeyFile;
const spare = mkdtempSync(path.join(os.tmpdir(), 'dw-ui-spools-'));

beforeAll(async () => {
  ui = await Ui.start({ allowlist: ALLOWLIST, daemon: false });
  work = path.join(ui.host.root, 'work-spool');
  ui.svc.spools.add('work', work, 'test');
  home = keyFileOf(ui.svc.keys.create('home-agent', 'write', null, 'test', 'default'));
  office = keyFileOf(ui.svc.keys.create('office-agent', 'write', null, 'test', 'work'));
  // One daemon for every spool of the home (the harness's serves only its first spool).
  daemon = new DaemonProcess(track(spawn(process.execPath, [CLI, 'daemon', '--home', ui.host.home], { stdio: ['ignore', 'pipe', 'pipe'] })));
  await daemon.ready();
  ui.daemon = daemon;
});
afterAll(async () => {
  await daemon?.stop();
  await ui?.close();
  rmSync(spare, { recursive: true, force: true });
});

const submit = (spool: string, key: KeyFile, id: string, op: string, args: Record<string, unknown> = {}) => writeQueueFile(spool, `${id}.json`, envelope(key, id, op, args));

describe('the spool switcher', () => {
  it('narrows Activity, Approvals, Keys and Audit to one spool, and names the spool in each list', async () => {
    submit(ui.host.spool, home, 'home-hello', 'hello', { name: 'home' });
    submit(work, office, 'work-hello', 'hello', { name: 'work' });
    submit(work, office, 'work-ship', 'ship');
    expect((await waitForResult(ui.host.spool, 'home-hello')).state).toBe('succeeded');
    expect((await waitForResult(work, 'work-hello')).state).toBe('succeeded');
    await expect.poll(() => ui.svc.requests.get(handleOf('work-ship', 'work'))?.state).toBe('awaiting_approval');

    await ui.open('/activity');
    const page = ui.page;
    const switcher = page.getByLabel('Spool', { exact: true });
    const recent = page.getByRole('table', { name: 'Recent results' });
    await recent.getByRole('row', { name: /home-hello/ }).waitFor();
    await recent.getByRole('row', { name: /work-hello/ }).waitFor();
    expect(await recent.getByRole('columnheader', { name: 'Spool' }).count()).toBe(1);
    await expect.poll(() => recent.getByRole('row', { name: /work-hello/ }).getByRole('cell', { name: 'work', exact: true }).count()).toBe(1);
    expect(await switcher.inputValue()).toBe('');

    await switcher.selectOption('work');
    await expect.poll(() => recent.getByRole('row', { name: /home-hello/ }).count()).toBe(0);
    await recent.getByRole('row', { name: /work-hello/ }).waitFor();
    await page.getByRole('table', { name: 'Awaiting approval' }).getByRole('row', { name: /work-ship/ }).waitFor();
    await ui.screenshots('spool-switcher');

    // The choice stays from screen to screen.
    await page.getByRole('navigation', { name: 'Screens' }).getByRole('link', { name: /Keys/ }).click();
    await page.getByRole('row', { name: 'Key office-agent' }).waitFor();
    expect(await page.getByRole('row', { name: 'Key home-agent' }).count()).toBe(0);
    await page.getByLabel('Spool', { exact: true }).selectOption('default');
    await page.getByRole('row', { name: 'Key home-agent' }).waitFor();
    expect(await page.getByRole('row', { name: 'Key office-agent' }).count()).toBe(0);

    // Approvals: nothing from default waits; the one from work does.
    await page.getByRole('navigation', { name: 'Screens' }).getByRole('link', { name: /Approvals/ }).click();
    await page.getByText('Nothing from spool default is waiting for you').waitFor();
    await page.getByLabel('Spool', { exact: true }).selectOption('work');
    await page.getByRole('listbox').getByRole('option', { name: /ship/ }).waitFor();

    // Audit: only entries of the chosen spool, with a Spool column.
    await page.getByRole('navigation', { name: 'Screens' }).getByRole('link', { name: /Audit/ }).click();
    const table = page.getByRole('grid').or(page.getByRole('table')).first();
    await table.getByText('work-hello').first().waitFor();
    expect(await table.getByText('home-hello').count()).toBe(0);
    // An entry's detail names its spool.
    await table.getByText('work-hello').first().click();
    const detail = page.getByRole('complementary', { name: /#\d+/ });
    await expect.poll(() => detail.textContent()).toMatch(/Spool\s*work/);
    await detail.getByRole('button', { name: 'Close detail' }).click();
    await page.getByLabel('Spool', { exact: true }).selectOption('');
    await table.getByText('home-hello').first().waitFor();
    expect(ui.errors).toEqual([]);
  });

  it('makes a key for the spool chosen in the form, and the question names it', async () => {
    await ui.open('/keys');
    const page = ui.page;
    await page.getByRole('button', { name: 'New key…' }).click();
    await page.getByLabel('Name').fill('second-office');
    await page.getByLabel('Spool', { exact: true }).last().selectOption('work');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('region', { name: /Key “second-office” created/ }).getByText(`export DUMBWAITER_SPOOL='${work}'`).waitFor();
    expect(ui.confirmations.at(-1)?.message).toBe('Create a read key "second-office" for spool work?');
    expect(ui.svc.keys.list('work').map((k) => k.name)).toContain('second-office');
    expect(ui.errors).toEqual([]);
  });
});

describe('Settings > Spools', () => {
  it("shows each spool's real probe, refuses to remove one with open requests, adds one through the folder picker and removes one", async () => {
    await ui.open('/settings');
    const page = ui.page;
    const spools = page.getByRole('list', { name: 'Spools' });
    const workCard = spools.getByRole('listitem', { name: 'Spool work' });
    await workCard.getByText(work, { exact: true }).waitFor();
    await workCard.getByRole('button', { name: 'Check again: spool work' }).click();
    await expect.poll(() => ui.svc.spools.list().find((s) => s.name === 'work')?.probe?.verdict ?? null).not.toBeNull();
    const report = ui.svc.spools.list().find((s) => s.name === 'work')!.probe!;
    await workCard.getByText(report.summary).waitFor();
    await workCard.getByText({ ok: 'OK', degraded: 'Degraded', unusable: 'Unusable' }[report.verdict], { exact: true }).waitFor();
    await workCard.getByText('The checks').click();
    await workCard.getByText(/atomic rename/).waitFor();
    // A detail too long for the card wraps under its own text, not back to the start of the line.
    const check = (name: string) => workCard.getByRole('table', { name: 'The checks' }).getByRole('row').filter({ hasText: name });
    const title = (await check('one filesystem').getByRole('rowheader').boundingBox())!;
    const detail = (await check('one filesystem').getByRole('cell').last().boundingBox())!;
    const oneLine = (await check('fsync of a file').boundingBox())!;
    expect(detail.height).toBeGreaterThan(oneLine.height * 1.5);
    expect(detail.x).toBeGreaterThanOrEqual(title.x + title.width);

    // work-ship still waits for approval: removing work is refused, and the button says why.
    const remove = workCard.getByRole('button', { name: 'Remove spool work' });
    expect(await remove.isDisabled()).toBe(true);
    await workCard.getByText('It has 1 open request: settle or cancel it first.').waitFor();
    expect(() => ui.svc.spools.remove('work', 'test')).toThrow('open request');

    // Add one: a name, a picked folder, the native question (a no changes nothing), then it is served.
    const target = path.join(spare, 'lab');
    await page.getByRole('button', { name: 'Add spool…' }).click();
    const form = page.getByRole('form', { name: 'Add a spool' });
    await form.getByLabel('Spool name').fill('Lab!');
    await form.getByRole('button', { name: 'Add spool' }).click();
    await form.getByText(/A name of 1-32 lowercase letters/).waitFor();
    await form.getByLabel('Spool name').fill('lab');
    ui.pickedFolder = target;
    await form.getByRole('button', { name: 'Choose folder…' }).click();
    await form.getByText(target, { exact: true }).waitFor();
    ui.confirmAnswer = false;
    await form.getByRole('button', { name: 'Add spool' }).click();
    await form.getByText('Not added: you cancelled in the confirmation dialog.').waitFor();
    expect(ui.confirmations.at(-1)?.message).toBe(`Share ${target} with one sandbox as spool lab?`);
    expect(existsSync(target)).toBe(false);
    ui.confirmAnswer = true;
    await form.getByRole('button', { name: 'Add spool' }).click();
    await spools.getByRole('listitem', { name: 'Spool lab' }).getByText(target, { exact: true }).waitFor();
    expect(ui.svc.settings.get().spools.map((s) => s.name)).toEqual(['default', 'work', 'lab']);
    expect(existsSync(path.join(target, 'queue'))).toBe(true);

    // A folder the host refuses (another spool's): its words are shown.
    await page.getByRole('button', { name: 'Add spool…' }).click();
    await form.getByLabel('Spool name').fill('again');
    ui.pickedFolder = work;
    await form.getByRole('button', { name: 'Choose folder…' }).click();
    await form.getByRole('button', { name: 'Add spool' }).click();
    await form.getByRole('alert').getByText(/is the folder of spool "work"/).waitFor();
    await form.getByRole('button', { name: 'Cancel' }).click();

    await page.evaluate(() => document.getElementById('spools-title')?.scrollIntoView());
    await ui.screenshots('settings-spools');

    // Remove lab: the folder stays.
    await spools.getByRole('listitem', { name: 'Spool lab' }).getByRole('button', { name: 'Remove spool lab' }).click();
    await expect.poll(() => spools.getByRole('listitem', { name: 'Spool lab' }).count()).toBe(0);
    expect(ui.confirmations.at(-1)?.detail).toContain('The folder is left as it is');
    expect(ui.svc.settings.get().spools.map((s) => s.name)).toEqual(['default', 'work']);
    expect(existsSync(path.join(target, 'queue'))).toBe(true);
    // The daemon still answers both spools.
    submit(work, office, 'work-after', 'hello', { name: 'after' });
    expect((await waitForResult(work, 'work-after')).state).toBe('succeeded');
    expect(ui.errors).toEqual([]);
  });
});
