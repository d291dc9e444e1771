// The allowlist editor in real Chromium against the real host: adding an operation through the form
// reaches allowlist.yaml (comments kept) and the running daemon's catalog.json; problems show as you
// type and block saving; the preview shows the exact argv and a dry run really runs; an outside edit
// is noticed and never overwritten; the YAML view is exactly what is saved.
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CatalogDoc } from '../../shared/protocol/types';
import { parse } from 'yaml';
import { Ui, description } from './harness';

const ALLOWLIST = `# Test allowlist: this comment must survive every save.
version: 1
operations:
  - name: say
    description: Print a message
    command: [/bin/echo, "{msg}"]   # the program never comes from a request
    args:
      msg: {type: string, max_length: 200}
    scope: read                 # read | write
    approval: never

  # A comment between operations stays too.
  - name: count
    description: Count to a number
    command: [/usr/bin/seq, "{n}"]
    args:
      n: {type: integer, min: 1, max: 100}
    scope: read
`;

let ui: Ui;
const file = () => path.join(ui.host.home, 'allowlist.yaml');
const onDisk = () => readFileSync(file(), 'utf8');

beforeAll(async () => {
  ui = await Ui.start({ allowlist: ALLOWLIST });
});
afterAll(async () => {
  await ui?.close();
});
beforeEach(async () => {
  // Every test starts from the same file and a freshly loaded page (the editor keeps state across screens).
  ui.host.writeAllowlist(ALLOWLIST);
  await ui.open('/allowlist');
  await ui.page.getByRole('navigation', { name: 'Operations' }).getByRole('button', { name: /say/ }).waitFor();
});

const opButton = (name: string) => ui.page.getByRole('navigation', { name: 'Operations' }).getByRole('button', { name: new RegExp(`^${name}\\b`) });
const saveButton = () => ui.page.getByRole('button', { name: 'Save', exact: true });
const dryRuns = () => ui.host.audit('', 'dry_run');
/** The YAML view's text (what Save writes), back on the form tab afterwards. */
async function yamlText(): Promise<string> {
  await ui.page.getByRole('tab', { name: 'YAML' }).click();
  const text = await ui.page.getByLabel(/^allowlist\.yaml/).inputValue();
  await ui.page.getByRole('tab', { name: 'Form' }).click();
  return text;
}

describe('the allowlist editor', () => {
  it('adds an operation through the form; saving keeps comments and the daemon publishes it in catalog.json', async () => {
    const p = ui.page;
    await p.getByRole('button', { name: 'Add operation' }).click();
    await expect.poll(() => p.getByLabel('Operation name').inputValue()).toBe('new-operation');
    await p.getByLabel('Operation name').fill('greet');
    await p.getByRole('region', { name: 'Operation', exact: true }).getByLabel('Description').fill('Greet someone by name');
    await p.getByLabel('Command part 1 (program)').fill('/bin/echo');
    await p.getByRole('button', { name: 'Add part' }).click();
    await p.getByLabel('Command part 2').fill('hello, {who}');
    // The placeholder names an argument that does not exist yet: the validator says so next to the part.
    await p.getByText('uses {who}, which is not declared under args', { exact: true }).waitFor();
    await expect.poll(() => saveButton().isDisabled()).toBe(true);

    await p.getByRole('button', { name: 'Add argument' }).click();
    const arg = p.getByRole('group', { name: /^Argument 1/ });
    await arg.getByLabel('Name').fill('who');
    await arg.getByLabel('Type').selectOption('string');
    await arg.getByLabel('Pattern').fill('[A-Za-z]+');
    await arg.getByLabel('Max length').fill('40');
    await arg.getByLabel('Description', { exact: true }).fill('Who to greet');
    // The words a new user reads: Required's automatic choice fits its box, its meaning underneath;
    // the working folder's hint says what an empty one means (the schema's words, not "home").
    expect(await arg.getByLabel('Required').evaluate((s: HTMLSelectElement) => s.selectedOptions[0]!.text)).toBe('Automatic');
    expect(await description(arg.getByLabel('Required'))).toBe('Automatic: required unless it has a default.');
    expect(await description(p.getByLabel('Working folder'))).toBe('Absolute, or starting with ~/ (your home folder). Empty: an empty folder private to the host user.');
    await arg.scrollIntoViewIfNeeded();
    await ui.screenshots('allowlist-argument');
    // The working folder from the (stand-in) OS folder picker.
    ui.pickedFolder = ui.host.work;
    await p.getByRole('button', { name: 'Choose folder…' }).click();
    await expect.poll(() => p.getByLabel('Working folder').inputValue()).toBe(ui.host.work);
    await p.getByLabel('Approval').selectOption('never');
    await p.getByLabel('Scope').selectOption('read');

    await expect.poll(() => p.getByText('uses {who}, which is not declared under args', { exact: true }).count()).toBe(0);
    await expect.poll(() => saveButton().isDisabled()).toBe(false);
    await p.getByText('Unsaved changes').waitFor();
    await p.locator('#content').evaluate((e) => e.scrollTo(0, 0));
    await ui.screenshots('allowlist');
    // Save asks first, natively (main's question, which the page cannot answer), showing the new
    // command as it will run; a "no" saves nothing.
    const asked = ui.confirmations.length;
    ui.confirmAnswer = false;
    await saveButton().click();
    await p.getByText('Not saved: cancelled in the confirmation dialog').waitFor();
    ui.confirmAnswer = true;
    expect(ui.confirmations.slice(asked)).toEqual([
      {
        title: 'Save the allowlist',
        message: 'Let the sandbox run this command?',
        detail: expect.stringContaining('+ greet (new):\n    name: "greet"\n'),
      },
    ]);
    // Every field with its value (shared/allowlist/describe.ts): the command element by element, the folder, the argument's rules.
    for (const line of ['    command:\n        program: "/bin/echo"\n        argument 1: "hello, {who}"', `    cwd: ${JSON.stringify(ui.host.work)}`, '    args.who.pattern: "[A-Za-z]+"', '    args.who.max_length: 40', '    scope: read', '    approval: never', '    env: none']) {
      expect(ui.confirmations[asked]!.detail).toContain(line);
    }
    expect(onDisk()).toBe(ALLOWLIST);
    await p.getByText('Unsaved changes').waitFor();
    await saveButton().click();
    await p.getByText('All changes saved').waitFor();
    expect(ui.confirmations.length).toBe(asked + 2);

    // The file: the new operation, and every comment and untouched line of the original, byte for byte.
    const saved = onDisk();
    for (const line of ALLOWLIST.split('\n')) expect(saved).toContain(line);
    expect(saved).toContain('- name: greet');
    expect(saved).toContain(`cwd: ${ui.host.work}`);
    expect(saved).toContain('command: [/bin/echo, "hello, {who}"]');
    expect(saved).toMatch(/who: \{type: string, pattern: "\[A-Za-z\]\+", max_length: 40, description: Who to greet\}/);

    // The running daemon reloads it and publishes the operation to the sandbox.
    const catalog = path.join(ui.host.spool, 'catalog.json');
    await expect
      .poll(() => {
        try {
          return (JSON.parse(readFileSync(catalog, 'utf8')) as CatalogDoc).operations.find((o) => o.name === 'greet') ?? null;
        } catch {
          return null;
        }
      }, { timeout: 15_000 })
      .toMatchObject({ name: 'greet', description: 'Greet someone by name', scope: 'read', approval: 'never' });
    expect(ui.host.audit('', 'allowlist_saved').length).toBeGreaterThan(0);
    expect(ui.errors).toEqual([]);
  });

  it('shows problems next to the fields as you type, and refuses to save them', async () => {
    const p = ui.page;
    await opButton('say').click();
    await p.getByLabel('Operation name').fill('Say It');
    const nameError = p.getByText('must match ^[a-z][a-z0-9._-]{0,63}$', { exact: true });
    await nameError.waitFor();
    // The error is the name field's own description (next to it, and announced with it).
    await expect.poll(() => p.getByLabel('Operation name').getAttribute('aria-invalid')).toBe('true');
    await expect.poll(() => description(p.getByLabel('Operation name'))).toMatch(/must match/);
    await p.getByLabel('Command part 2').fill('{text}');
    await p.getByText('uses {text}, which is not declared under args', { exact: true }).waitFor();
    await expect.poll(() => p.getByLabel('Command part 2').getAttribute('aria-invalid')).toBe('true');
    await p.getByRole('group', { name: /^Argument 1/ }).getByText('is declared but not used in command', { exact: true }).waitFor();
    // The list marks the operation, the summary counts the problems, Save is off and Ctrl+S refuses.
    await opButton('Say It').getByLabel('has problems').waitFor();
    await p.getByRole('alert').filter({ hasText: 'problems to fix before saving' }).waitFor();
    await expect.poll(() => saveButton().isDisabled()).toBe(true);
    await p.getByLabel('Command part 1 (program)').focus();
    await p.keyboard.press('Control+s');
    await p.getByText('Not saved: fix the problems listed first').waitFor();
    expect(onDisk()).toBe(ALLOWLIST);

    // Fixing them clears the errors.
    await p.getByLabel('Operation name').fill('say');
    await p.getByLabel('Command part 2').fill('{msg}');
    await expect.poll(() => nameError.count()).toBe(0);
    await expect.poll(() => p.getByText('is declared but not used in command', { exact: true }).count()).toBe(0);
    await p.getByText('All changes saved').waitFor(); // back to the file's exact text
    expect(ui.errors).toEqual([]);
  });

  it('previews the exact argv for sample arguments, and a dry run really runs it once the person confirms the exact command', async () => {
    const p = ui.page;
    await opButton('say').click();
    await p.getByLabel('Sample msg').fill('hello; rm -rf ~');
    const argv = p.getByLabel('Command that runs');
    await expect.poll(() => argv.locator('code.argv-part').allTextContents()).toEqual(['/bin/echo', 'hello; rm -rf ~']);
    // A value that breaks the argument's constraint: the preview says why instead.
    await p.getByLabel('Sample msg').fill('x'.repeat(201));
    await p.getByRole('status').filter({ hasText: /msg.*200/ }).waitFor();
    await p.getByLabel('Sample msg').fill('dry run from the editor');
    await expect.poll(() => argv.locator('code.argv-part').allTextContents()).toEqual(['/bin/echo', 'dry run from the editor']);
    await p.getByText('A dry run really runs this command now').waitFor();
    // A click only asks: the native question (main's, which the page cannot answer) names the exact
    // argv and folder; a "no" runs nothing and shows nothing.
    const ranBefore = dryRuns().length;
    const plan = ui.svc.allowlist.preview(ALLOWLIST, 'say', { msg: 'dry run from the editor' });
    if (!plan.ok) throw new Error(plan.message);
    const asked = ui.confirmations.length;
    ui.confirmAnswer = false;
    await p.getByRole('button', { name: 'Dry run' }).click();
    await expect.poll(() => ui.confirmations.length).toBe(asked + 1);
    ui.confirmAnswer = true;
    expect(ui.confirmations[asked]).toMatchObject({ message: 'Run say now, on this computer?', detail: expect.stringContaining(`program: "/bin/echo"\nargument 1: "dry run from the editor"\nin folder: ${JSON.stringify(plan.plan.cwd)}\nenvironment (added to the host's own): none`) });
    const dryButton = p.getByRole('button', { name: 'Dry run' });
    await expect.poll(() => dryButton.isEnabled()).toBe(true);
    expect(dryRuns().length).toBe(ranBefore);
    expect(await p.getByRole('region', { name: 'Dry run result' }).count()).toBe(0);
    // The keyboard carries on from the button.
    await expect.poll(() => dryButton.evaluate((e) => e === document.activeElement)).toBe(true);
    await p.keyboard.press('Enter');
    const result = p.getByRole('region', { name: 'Dry run result' });
    await result.getByText('Exit code 0').waitFor();
    await expect.poll(() => result.getByLabel('Dry run standard output').textContent()).toBe('dry run from the editor\n');
    // It really ran on the host: the audit log records it.
    expect(dryRuns().length).toBe(ranBefore + 1);
    expect(dryRuns().some((a) => a.message.includes('dry-ran say'))).toBe(true);
    await p.getByRole('region', { name: 'Try it' }).evaluate((e) => e.scrollIntoView({ block: 'start' }));
    await ui.screenshots('allowlist-dry-run');
    expect(ui.errors).toEqual([]);
  });

  it('a reconcile check is written into the YAML from its own section, checked as you type, tried once after a native yes, and published', async () => {
    const p = ui.page;
    await opButton('say').click();
    const section = p.getByRole('region', { name: 'Reconcile', exact: true });
    const part = (n: number) => section.getByRole('textbox', { name: n === 1 ? 'Reconcile part 1 (program)' : `Reconcile part ${n}`, exact: true });
    await section.getByRole('button', { name: 'Add a reconcile check' }).click();
    await part(1).fill('/bin/sh');
    for (const [i, text] of ['-c', 'echo "looked up $0 for $1"; exit 1', '{msg}', '{nope}'].entries()) {
      await section.getByRole('button', { name: 'Add reconcile part' }).click();
      await part(i + 2).fill(text);
    }
    // A placeholder that is neither an argument nor {request_id}: said next to the part, and nothing can be saved.
    await section.getByText('uses {nope}, which is neither an argument of the operation nor {request_id}', { exact: true }).waitFor();
    await expect.poll(() => saveButton().isDisabled()).toBe(true);
    await part(5).fill('{request_id}');
    await section.getByLabel('Reconcile timeout (seconds)').fill('10');
    await expect.poll(() => saveButton().isDisabled()).toBe(false);
    // {request_id} is in: it is no longer offered.
    expect(await section.getByRole('button', { name: 'Add {request_id}' }).count()).toBe(0);
    const yaml = await yamlText();
    expect((parse(yaml) as { operations: { reconcile?: unknown }[] }).operations[0]!.reconcile).toEqual({
      command: ['/bin/sh', '-c', 'echo "looked up $0 for $1"; exit 1', '{msg}', '{request_id}'],
      timeout_s: 10,
    });
    // A block under the operation, its command on one line like the operation's.
    expect(yaml).toMatch(/\n {4}reconcile:\n {6}command: \[\/bin\/sh, .*\]\n {6}timeout_s: 10\n/);
    for (const line of ALLOWLIST.split('\n')) expect(yaml).toContain(line);

    // Tried once: only after the native question names the exact command and the stand-in request id.
    await p.getByLabel('Sample msg').fill('v1.2');
    const tryIt = p.getByRole('button', { name: 'Try the reconcile check…' });
    await expect.poll(() => tryIt.isEnabled()).toBe(true);
    const ranBefore = dryRuns().length;
    const asked = ui.confirmations.length;
    ui.confirmAnswer = false;
    await tryIt.click();
    await expect.poll(() => ui.confirmations.length).toBe(asked + 1);
    ui.confirmAnswer = true;
    expect(ui.confirmations[asked]).toMatchObject({
      message: 'Run the reconcile command of say now, on this computer?',
      detail: expect.stringContaining('program: "/bin/sh"\nargument 1: "-c"\nargument 2: "echo \\"looked up $0 for $1\\"; exit 1"\nargument 3: "v1.2"\nargument 4: "dry-run"'),
    });
    await expect.poll(() => tryIt.isEnabled()).toBe(true);
    expect(dryRuns().length).toBe(ranBefore);
    const result = p.getByRole('region', { name: 'Reconcile check result' });
    expect(await result.count()).toBe(0);
    await tryIt.click();
    await result.getByText('Verdict: did not take effect').waitFor();
    await result.getByText('Exit code 1').waitFor();
    expect(await result.getByLabel('Reconcile check standard output').textContent()).toBe('looked up v1.2 for dry-run\n');
    expect(await result.getByLabel('Command that runs').locator('code.argv-part').allTextContents()).toEqual(['/bin/sh', '-c', 'echo "looked up $0 for $1"; exit 1', 'v1.2', 'dry-run']);
    expect(dryRuns().length).toBe(ranBefore + 1);
    // Tall enough to show the section and the result of its check together.
    await p.setViewportSize({ width: 1200, height: 1400 });
    await section.evaluate((e) => e.scrollIntoView({ block: 'start' }));
    await ui.screenshots('allowlist-reconcile');
    await p.setViewportSize({ width: 1200, height: 800 });

    // Saved (after the native question), the running daemon publishes that the operation can be reconciled.
    await saveButton().click();
    await p.getByText('All changes saved').waitFor();
    expect(onDisk()).toBe(yaml);
    const catalog = path.join(ui.host.spool, 'catalog.json');
    await expect
      .poll(() => (JSON.parse(readFileSync(catalog, 'utf8')) as CatalogDoc).operations.find((o) => o.name === 'say')?.reconcile, { timeout: 10_000 })
      .toBe(true);

    // Removed again, the block goes and nothing else changes.
    await section.getByRole('button', { name: 'Remove the reconcile check' }).click();
    expect(await yamlText()).toBe(ALLOWLIST);
    expect(ui.errors).toEqual([]);
  });

  it('a dry run is only offered for an allowlist without problems', async () => {
    const p = ui.page;
    const ranBefore = dryRuns().length;
    await opButton('say').click();
    await p.getByLabel('Sample msg').fill('hi');
    const dry = p.getByRole('button', { name: 'Dry run' });
    await expect.poll(() => dry.isDisabled()).toBe(false);
    // A problem anywhere in the file (here in the other operation) turns it off, and says why.
    await opButton('count').click();
    await p.getByLabel('Command part 2').fill('{m}');
    await opButton('say').click();
    await p.getByLabel('Sample msg').fill('hi');
    await expect.poll(() => dry.isDisabled()).toBe(true);
    await expect.poll(() => description(dry)).toContain('only an allowlist without problems can be dry-run');
    await opButton('count').click();
    await p.getByLabel('Command part 2').fill('{n}');
    await opButton('say').click();
    await p.getByLabel('Sample msg').fill('hi');
    await expect.poll(() => dry.isDisabled()).toBe(false);
    expect(dryRuns().length).toBe(ranBefore);
    expect(ui.errors).toEqual([]);
  });

  it('the try-out belongs to one operation: deleting it or changing its inputs drops the old result', async () => {
    const p = ui.page;
    const ranBefore = dryRuns().length;
    await opButton('say').click();
    await p.getByLabel('Sample msg').fill('first');
    const result = p.getByRole('region', { name: 'Dry run result' });
    const dryRun = async () => {
      await p.getByRole('button', { name: 'Dry run' }).click();
      await result.getByText('Exit code 0').waitFor();
    };
    await dryRun();
    // New sample arguments: the result of the old ones goes.
    await p.getByLabel('Sample msg').fill('second');
    await expect.poll(() => result.count()).toBe(0);
    await dryRun();
    await expect.poll(() => result.getByLabel('Dry run standard output').textContent()).toBe('second\n');
    // A changed text (here the description): the result goes too.
    await p.getByRole('region', { name: 'Operation', exact: true }).getByLabel('Description').fill('Print it');
    await expect.poll(() => result.count()).toBe(0);
    await dryRun();
    // Deleting the operation: the next one takes its place in the list, not its samples or result.
    await p.getByRole('button', { name: 'Delete operation' }).click();
    await p.getByRole('dialog').getByRole('button', { name: 'Delete operation' }).click();
    await expect.poll(() => p.getByLabel('Operation name').inputValue()).toBe('count');
    await p.getByLabel('Sample n').waitFor();
    expect(await p.getByLabel('Sample n').inputValue()).toBe('');
    expect(await result.count()).toBe(0);
    expect(await p.getByRole('region', { name: 'Try it' }).textContent()).not.toContain('second');
    expect(dryRuns().length).toBe(ranBefore + 3);
    expect(ui.errors).toEqual([]);
  });

  it('an edit in the form leaves the fields it did not touch as the file has them, invalid ones included', async () => {
    const p = ui.page;
    const odd = ALLOWLIST.replace('msg: {type: string, max_length: 200}', 'msg: {type: string, enum: ["a, b", " c"]}')
      .replace('scope: read                 # read | write', 'scope: raed                 # read | write')
      .replace('approval: never', 'approval: never\n    timeout_s: 1.5');
    ui.host.writeAllowlist(odd);
    await ui.open('/allowlist');
    await opButton('say').click();
    // The form shows what the file says: each allowed value in its own box, the typo as invalid.
    const arg = p.getByRole('group', { name: /^Argument 1/ });
    const values = arg.getByRole('group', { name: 'Allowed values' });
    await expect.poll(() => values.getByRole('textbox').evaluateAll((els) => els.map((e) => (e as HTMLInputElement).value))).toEqual(['a, b', ' c']);
    await expect.poll(() => p.getByLabel('Scope').locator('option:checked').textContent()).toBe('(invalid: raed)');
    await expect.poll(() => p.getByLabel('Timeout (seconds)').inputValue()).toBe('1.5');
    expect(await opButton('say').textContent()).toContain('invalid scope');
    await arg.evaluate((e) => e.scrollIntoView({ block: 'start' }));
    await ui.screenshots('allowlist-invalid-values');

    // Changing the description changes that line and nothing else.
    await p.getByRole('region', { name: 'Operation', exact: true }).getByLabel('Description').fill('Print one of two');
    await p.getByText('Unsaved changes').waitFor();
    const after = await yamlText();
    expect(after).toBe(odd.replace('Print a message', 'Print one of two'));

    // Picking a scope writes it; the allowed values are edited one per box (Enter adds the next).
    await p.getByLabel('Scope').selectOption('read');
    await p.getByLabel('Timeout (seconds)').fill('2');
    await values.getByLabel('Allowed value 2', { exact: true }).press('Enter');
    await expect.poll(() => values.getByLabel('Allowed value 3', { exact: true }).evaluate((e) => e === document.activeElement)).toBe(true);
    await p.keyboard.type('d, e');
    // An empty box added by mistake goes again from the keyboard; the focus stays in the list.
    await p.keyboard.press('Enter');
    await values.getByRole('button', { name: 'Remove allowed value 4' }).press('Enter');
    await expect.poll(() => values.getByLabel('Allowed value 3', { exact: true }).evaluate((e) => e === document.activeElement)).toBe(true);
    await expect.poll(() => values.getByRole('textbox').count()).toBe(3);
    await saveButton().click();
    await p.getByText('All changes saved').waitFor();
    const saved = onDisk();
    expect(saved).toContain('msg: {type: string, enum: ["a, b", " c", "d, e"]}');
    expect(saved).toContain('scope: read                 # read | write');
    expect(saved).toContain('timeout_s: 2');
    // The host takes the saved file, and allows exactly those values (commas and spaces included).
    expect(ui.svc.allowlist.read().check.ok).toBe(true);
    expect(ui.svc.allowlist.preview(saved, 'say', { msg: 'd, e' }).ok).toBe(true);
    expect(ui.svc.allowlist.preview(saved, 'say', { msg: ' c' }).ok).toBe(true);
    expect(ui.svc.allowlist.preview(saved, 'say', { msg: 'a' }).ok).toBe(false);
    expect(ui.errors).toEqual([]);
  });

  it('typing an argument name that clashes keeps what is typed and the file intact until the clash is gone', async () => {
    const p = ui.page;
    await opButton('say').click();
    await p.getByRole('button', { name: 'Add argument' }).click();
    const arg = p.getByRole('group', { name: /^Argument 2/ });
    await arg.getByLabel('Name').fill('msg');
    await p.getByRole('alert').filter({ hasText: 'Two arguments are named “msg”' }).waitFor();
    expect(await arg.getByLabel('Name').inputValue()).toBe('msg');
    expect(await yamlText()).toContain('msg: {type: string, max_length: 200}');
    await arg.getByLabel('Name').fill('msg2');
    await expect.poll(() => p.getByRole('alert').filter({ hasText: 'Two arguments are named' }).count()).toBe(0);
    const text = await yamlText();
    expect(text).toContain('      msg: {type: string, max_length: 200}\n      msg2: {type: string}');
    // A clash between two arguments the command does not use yet (each offered once as "Add {…}").
    await p.getByRole('button', { name: 'Add argument' }).click();
    await p.getByRole('group', { name: /^Argument 3/ }).getByLabel('Name').fill('msg2');
    await p.getByRole('alert').filter({ hasText: 'Two arguments are named “msg2”' }).waitFor();
    await expect.poll(() => p.getByRole('button', { name: 'Add {msg2}' }).count()).toBe(1);
    expect(ui.errors).toEqual([]);
  });

  it('Ctrl+S does nothing while a confirmation is open; it saves once the dialog is answered', async () => {
    const p = ui.page;
    await opButton('count').click();
    await p.getByLabel('Timeout (seconds)').fill('45');
    await p.getByText('Unsaved changes').waitFor();
    await p.getByRole('button', { name: 'Discard' }).click();
    const dialog = p.getByRole('dialog', { name: 'Discard unsaved changes?' });
    await dialog.waitFor();
    await p.keyboard.press('Control+s');
    await p.keyboard.press('Control+s');
    expect(await p.getByText('Allowlist saved').count()).toBe(0);
    expect(onDisk()).toBe(ALLOWLIST);
    expect(await dialog.isVisible()).toBe(true);
    // Escape answers "no": the changes stay, and now Ctrl+S saves them.
    await p.keyboard.press('Escape');
    await expect.poll(() => dialog.count()).toBe(0);
    await p.getByText('Unsaved changes').waitFor();
    await p.keyboard.press('Control+s');
    await p.getByText('All changes saved').waitFor();
    expect(onDisk()).toContain('timeout_s: 45');
    expect(ui.errors).toEqual([]);
  });

  it('a path argument takes its folders from the folder picker, and the preview checks a sample against them', async () => {
    const p = ui.page;
    await opButton('say').click();
    await p.getByRole('button', { name: 'Add argument' }).click();
    const arg = p.getByRole('group', { name: /^Argument 2/ });
    await arg.getByLabel('Name').fill('where');
    await arg.getByLabel('Type').selectOption('path');
    const work = ui.host.work;
    mkdirSync(path.join(work, 'docs'), { recursive: true });
    ui.pickedFolder = work;
    await arg.getByRole('button', { name: 'Add folder…' }).click();
    await expect.poll(() => arg.getByLabel('Allowed folders').inputValue()).toBe(work);
    await p.getByRole('button', { name: 'Add {where}' }).click();
    await p.getByLabel('Sample msg').fill('hi');
    await p.getByLabel('Sample where').fill(path.join(work, 'docs'));
    const argv = p.getByLabel('Command that runs');
    await expect.poll(() => argv.locator('code.argv-part').allTextContents()).toEqual(['/bin/echo', 'hi', path.join(work, 'docs')]);
    // Outside the allowed folders: refused, and the preview says so.
    await p.getByLabel('Sample where').fill('/etc');
    await p.getByRole('status').filter({ hasText: 'is outside the allowed folders' }).waitFor();
    await p.getByRole('tab', { name: 'YAML' }).click();
    expect(await p.getByLabel(/^allowlist\.yaml/).inputValue()).toContain(`where: {type: path, within: [${work}]}`);
    expect(ui.errors).toEqual([]);
  });

  it('a folder that holds the spool is refused at its field; declaring it shared with the sandbox allows it and warns', async () => {
    const p = ui.page;
    await opButton('say').click();
    await p.getByRole('button', { name: 'Add argument' }).click();
    const arg = p.getByRole('group', { name: /^Argument 2/ });
    await arg.getByLabel('Name').fill('where');
    await arg.getByLabel('Type').selectOption('path');
    await arg.getByLabel('Allowed folders').fill(ui.host.spool);
    await p.getByRole('button', { name: 'Add {where}' }).click();
    await expect.poll(() => description(arg.getByLabel('Allowed folders'))).toMatch(/contains the spool .*declare shared_with_sandbox: true/);
    expect(await arg.getByRole('note').count()).toBe(0);

    await arg.getByLabel('The sandbox can write in these folders').check();
    await expect.poll(() => arg.getByRole('note').textContent()).toMatch(/works on what the sandbox controls/);
    await expect.poll(() => description(arg.getByLabel('Allowed folders'))).not.toMatch(/contains the spool/);
    await p.getByLabel('Sample msg').fill('hi');
    await p.getByLabel('Sample where').fill(path.join(ui.host.spool, 'results'));
    await expect.poll(() => p.getByLabel('Command that runs').locator('code.argv-part').allTextContents()).toEqual(['/bin/echo', 'hi', path.join(ui.host.spool, 'results')]);
    expect(await yamlText()).toContain(`where: {type: path, within: [${ui.host.spool}], shared_with_sandbox: true}`);

    // The working folder: inside the spool only when declared so.
    const where = p.getByRole('region', { name: 'Where it runs' });
    await where.getByLabel('Working folder').fill(path.join(ui.host.spool, 'results'));
    await expect.poll(() => description(where.getByLabel('Working folder'))).toMatch(/lies inside the spool/);
    await where.getByLabel('The sandbox can write in this folder').check();
    await expect.poll(() => where.getByRole('note').textContent()).toMatch(/works on what the sandbox controls/);
    await expect.poll(() => description(where.getByLabel('Working folder'))).not.toMatch(/lies inside the spool/);
    expect(await yamlText()).toContain('cwd_shared_with_sandbox: true');
    expect(ui.errors).toEqual([]);
  });

  it('notices an outside edit while there are unsaved changes and never overwrites it', async () => {
    const p = ui.page;
    await opButton('say').click();
    await p.getByRole('region', { name: 'Operation', exact: true }).getByLabel('Description').fill('My unsaved description');
    await p.getByText('Unsaved changes').waitFor();
    const outside = ALLOWLIST.replace('Count to a number', 'Edited in another editor');
    ui.host.writeAllowlist(outside);
    const banner = p.getByRole('alert').filter({ hasText: 'allowlist.yaml changed on disk' });
    await banner.waitFor({ timeout: 10_000 });
    // Save is refused by the host (the file is not the one the editor started from).
    await saveButton().click();
    await p.getByText('Not saved: allowlist.yaml changed on disk since you opened it').waitFor();
    await expect.poll(() => banner.textContent()).toContain('your changes were not saved');
    expect(onDisk()).toBe(outside);
    // Both versions can be compared.
    await banner.getByRole('button', { name: 'Show both versions' }).click();
    await expect.poll(() => p.getByLabel('Version on disk').textContent()).toContain('Edited in another editor');
    await expect.poll(() => p.getByLabel('Your version').textContent()).toContain('My unsaved description');
    // Reloading takes the disk version (after confirming that the edits go).
    await banner.getByRole('button', { name: 'Reload from disk' }).click();
    await p.getByRole('dialog').getByRole('button', { name: 'Reload from disk' }).click();
    await expect.poll(() => banner.count()).toBe(0);
    await p.getByText('All changes saved').waitFor();
    await opButton('count').click();
    await expect.poll(() => p.getByRole('region', { name: 'Operation', exact: true }).getByLabel('Description').inputValue()).toBe('Edited in another editor');

    // Without unsaved changes an outside edit is simply loaded.
    ui.host.writeAllowlist(ALLOWLIST.replace('Print a message', 'Changed quietly'));
    await p.getByText('allowlist.yaml changed on disk: reloaded').waitFor({ timeout: 10_000 });
    await opButton('say').click();
    await expect.poll(() => p.getByRole('region', { name: 'Operation', exact: true }).getByLabel('Description').inputValue()).toBe('Changed quietly');
    expect(ui.errors).toEqual([]);
  });

  it('merges unsaved changes into an outside edit of another operation, then saves both', async () => {
    const p = ui.page;
    await opButton('say').click();
    await p.getByRole('region', { name: 'Operation', exact: true }).getByLabel('Description').fill('Edited in the app');
    const outside = ALLOWLIST.replace('# A comment between operations stays too.', '# Edited outside.').replace('Count to a number', 'Edited outside');
    ui.host.writeAllowlist(outside);
    const banner = p.getByRole('alert').filter({ hasText: 'allowlist.yaml changed on disk' });
    await banner.waitFor({ timeout: 10_000 });
    await banner.getByRole('button', { name: 'Merge my changes into it' }).click();
    await expect.poll(() => banner.count()).toBe(0);
    await p.getByText('Unsaved changes').waitFor();
    await saveButton().click();
    await p.getByText('All changes saved').waitFor();
    const saved = onDisk();
    expect(saved).toBe(outside.replace('Print a message', 'Edited in the app'));
    expect(ui.errors).toEqual([]);
  });

  it("the Spools field ticks the home's spools into spools:, marks a listed name that is not one of them, and none ticked means every spool", async () => {
    const p = ui.page;
    await opButton('count').click();
    const field = p.getByRole('group', { name: 'Spools' });
    const tick = field.getByRole('checkbox', { name: 'default' });
    await tick.waitFor();
    expect(await tick.isChecked()).toBe(false);
    await expect.poll(() => description(field)).toMatch(/^All spools/);

    await tick.check();
    await expect.poll(() => description(field)).toMatch(/^Only the agents of default see it/);
    const ticked = await yamlText();
    expect(ticked).toBe(ALLOWLIST.replace('    scope: read\n', '    scope: read\n    spools: [default]\n'));

    // A name in the file that is not a spool of this home: shown ticked and marked, a problem that blocks saving.
    await p.getByRole('tab', { name: 'YAML' }).click();
    await p.getByLabel(/^allowlist\.yaml/).fill(ticked.replace('spools: [default]', 'spools: [default, nightly]'));
    await p.getByRole('tab', { name: 'Form' }).click();
    const stray = field.getByRole('checkbox', { name: /nightly/ });
    await expect.poll(() => stray.isChecked()).toBe(true);
    await expect.poll(() => description(field)).toMatch(/"nightly" is not a spool of this home \(its spools: default\)/);
    await expect.poll(() => saveButton().isDisabled()).toBe(true);
    await field.evaluate((e) => e.scrollIntoView({ block: 'center' }));
    await ui.screenshots('allowlist-spools');

    // Unticked, it is gone from the file, and so from the field (it is no spool of this home).
    await stray.click();
    await expect.poll(() => stray.count()).toBe(0);
    await expect.poll(() => description(field)).toMatch(/^Only the agents of default see it/);
    await field.getByRole('button', { name: 'Offer to all spools' }).click();
    await expect.poll(() => description(field)).toMatch(/^All spools/);
    expect(await yamlText()).toBe(ALLOWLIST);
    expect(ui.errors).toEqual([]);
  });

  it('the YAML view shows exactly the text that is saved, and edits there reach the form', async () => {
    const p = ui.page;
    await opButton('count').click();
    await p.getByLabel('Timeout (seconds)').fill('30');
    await p.getByRole('tab', { name: 'YAML' }).click();
    const yaml = p.getByLabel(/^allowlist\.yaml/);
    const shown = await yaml.inputValue();
    expect(shown).toContain('timeout_s: 30');
    expect(shown).toContain('# A comment between operations stays too.');
    await p.locator('#content').evaluate((e) => e.scrollTo(0, 0));
    await ui.screenshots('allowlist-yaml');
    await p.keyboard.press('Control+s');
    await p.getByText('All changes saved').waitFor();
    expect(onDisk()).toBe(shown);

    // Typing in the YAML view: the form follows.
    await yaml.fill(shown.replace('Count to a number', 'Count up'));
    await p.getByRole('tab', { name: 'Form' }).click();
    await expect.poll(() => p.getByRole('region', { name: 'Operation', exact: true }).getByLabel('Description').inputValue()).toBe('Count up');
    expect(ui.errors).toEqual([]);
  });

  it('says which operations the host disabled because a link leads a folder of theirs into a spool, and why', async () => {
    const linked = path.join(ui.host.root, 'linked-project');
    symlinkSync(ui.host.spool, linked);
    ui.host.writeAllowlist(`${ALLOWLIST}
  - name: read-linked
    command: [/bin/cat, "{file}"]
    args:
      file: {type: path, within: [${JSON.stringify(linked)}]}
    scope: read
`);
    await ui.open('/allowlist');
    const callout = ui.page.locator('#disabled-operations');
    await callout.waitFor();
    expect(await callout.textContent()).toMatch(/^One operation is disabled: a link leads a folder into a spool or Dumbwaiter's home\. .*read-linked: line \d+: operations\[2\]\.args\.file\.within: .*linked-project leads to .*, which contains the spool "default"/s);
    ui.host.writeAllowlist(ALLOWLIST);
    await ui.open('/allowlist');
    await opButton('say').waitFor();
    expect(await callout.count()).toBe(0);
  });

  it('says when the host refuses the file on disk, why, and that it serves the last good version meanwhile, with its operations', async () => {
    ui.host.writeAllowlist(`${ALLOWLIST}\n  - name: broken\n`);
    const callout = ui.page.locator('#refused-file');
    await callout.waitFor();
    expect(await callout.textContent()).toMatch(/^The host refuses allowlist\.yaml as it is on disk\. It serves the last good version meanwhile, loaded .+: 2 operations \(say, count\)\..*allowlist\.yaml is invalid:.*operations\[2\]\.command: must be a non-empty list/s);
    expect(await ui.page.getByRole('navigation', { name: 'Screens' }).getByLabel('invalid: the last good version is served').count()).toBe(1);
    ui.host.writeAllowlist(ALLOWLIST);
    await expect.poll(() => callout.count()).toBe(0);
    expect(ui.errors).toEqual([]);
  });
});
