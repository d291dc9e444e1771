// The audit log screen in real Chromium on a real host: search and open an entry with its request,
// each filter narrows exactly like the host's own search, export of a whole search as CSV and JSON
// Lines, and 100,000 entries that page in without the DOM holding them all.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Locator } from 'playwright-core';
import { Ui } from './harness';
import { EXAMPLE_ALLOWLIST } from '../../main/core/allowlist/example';
import { openLedger } from '../../main/core/ledger/db';
import { AuditLog, type AuditEntry, type AuditQuery } from '../../main/core/ledger/audit';
import type { KeyFile } from '../../shared/protocol/types';

let ui: Ui;
let agent: KeyFile;
let reader: KeyFile;

beforeAll(async () => {
  // The ledger's retention covers the entries written with past days' times (2020): the daemon's
  // retention pass (5 s after its start) would otherwise remove them and record that it did, an entry
  // arriving in the middle of whichever test then runs.
  ui = await Ui.start({ allowlist: EXAMPLE_ALLOWLIST, settings: { retention_ledger_days: 36500 } });
  agent = ui.host.createKey('agent', 'write');
  reader = ui.host.createKey('reader', 'read');
  ui.host.submit(agent, 'req-audit-0001', 'echo', { msg: 'hello pineapple' });
  ui.host.submit(agent, 'req-audit-0002', 'echo', { msg: 'goodbye' });
  ui.host.submit(agent, 'req-audit-0003', 'no-such-op', {});
  // Outside the example's folder (~/Documents), so refused on every machine, whatever its home holds.
  ui.host.submit(reader, 'req-audit-0004', 'list-documents', { dir: '/etc' });
  await Promise.all(['req-audit-0001', 'req-audit-0002', 'req-audit-0003', 'req-audit-0004'].map((id) => ui.host.waitResult(id)));
});
afterAll(async () => {
  await ui?.close();
});

const grid = (): Locator => ui.page.getByRole('grid', { name: 'Audit entries' });
/** The seqs of the rows in the DOM, in order (each row's id is audit-row-<seq>). */
const renderedSeqs = (): Promise<number[]> => grid().locator('tbody tr[id]').evaluateAll((rows) => rows.map((r) => Number(r.id.replace('audit-row-', ''))));
const countLine = (): Locator => ui.page.locator('.audit-count');

/** Appends entries straight to the real ledger in one transaction (a second connection, as the CLI would). */
function insertAudit(entries: (AuditEntry & { at?: string })[]): void {
  const db = openLedger(path.join(ui.host.home, 'ledger.sqlite'));
  try {
    const log = new AuditLog(db);
    const atInsert = db.prepare(`INSERT INTO audit (at, kind, actor, request_id, key_id, op, message, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
    db.transaction(() => {
      for (const e of entries) {
        if (e.at) atInsert.run(e.at, e.kind, e.actor ?? 'daemon', e.request_id ?? null, e.key_id ?? null, e.op ?? null, e.message, e.details ? JSON.stringify(e.details) : null);
        else log.record(e);
      }
    })();
  } finally {
    db.close();
  }
}

/** The screen shows exactly the host's answer to the same search: the count, and the rows in order. */
async function expectShows(q: AuditQuery): Promise<void> {
  const want = ui.svc.audit.search({ ...q, limit: 10_000 });
  expect(want.length).toBeLessThan(200);
  if (want.length === 0) {
    await ui.page.getByRole('status').filter({ hasText: 'No entries match' }).waitFor();
    expect(await renderedSeqs()).toEqual([]);
    return;
  }
  await expect.poll(() => countLine().textContent()).toContain(`${want.length} ${want.length === 1 ? 'entry' : 'entries'}, newest first: all loaded`);
  await expect.poll(async () => {
    const seqs = await renderedSeqs();
    return seqs.length > 0 && seqs.join() === want.slice(0, seqs.length).map((e) => e.seq).join();
  }).toBe(true);
}

/** A CSV parser (RFC 4180) to read the export back. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  const endCell = () => {
    row.push(cell);
    cell = '';
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') endCell();
    else if (c === '\r' && text[i + 1] === '\n') {
      endCell();
      rows.push(row);
      row = [];
      i++;
    } else cell += c;
  }
  if (cell || row.length) {
    endCell();
    rows.push(row);
  }
  return rows;
}

describe('the audit log screen', () => {
  it('searches the audit log and opens an entry with its request, arguments, output and decision trail', async () => {
    await ui.open('/audit');
    await ui.page.getByRole('heading', { name: 'Audit log' }).waitFor();
    await expect.poll(() => renderedSeqs().then((s) => s.length)).toBeGreaterThan(5);
    await ui.screenshots('audit');
    // Kind, Key and Request show whole (every kind's label, this host's key ids, ids of this length);
    // each cell's title has the full text.
    const clipped = await grid()
      .locator('tbody tr[id]')
      .evaluateAll((rows) =>
        rows.flatMap((row) =>
          [1, 4, 5].flatMap((i) => {
            const cell = row.children[i]!;
            const cut = [cell, ...Array.from(cell.querySelectorAll('*'))].some((e) => e.clientWidth > 0 && e.scrollWidth > e.clientWidth);
            return cut ? [cell.textContent] : [];
          }),
        ),
      );
    expect(clipped).toEqual([]);
    const first = ui.svc.audit.search({ limit: 1 })[0]!;
    expect(await grid().locator(`#audit-row-${first.seq} td`).nth(5).getAttribute('title')).toBe(first.request_id);

    // By id: only that request's entries.
    await ui.page.getByLabel('Search', { exact: true }).fill('req-audit-0001');
    await expectShows({ text: 'req-audit-0001' });
    const rows = grid().locator('tbody tr[id]');
    for (const text of await rows.allTextContents()) expect(text).toContain('req-audit-0001');

    // By a word of one run's message (the argv it started): only that run's entry.
    await ui.page.getByLabel('Search', { exact: true }).fill('pineapple');
    await expectShows({ text: 'pineapple' });
    const hits = ui.svc.audit.search({ text: 'pineapple' });
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.every((h) => h.request_id === 'req-audit-0001')).toBe(true);

    // Open it: the entry, then the request in full.
    await rows.first().click();
    const detail = ui.page.getByRole('complementary', { name: /#\d+/ });
    await detail.getByRole('heading', { name: 'Arguments' }).waitFor();
    await expect.poll(() => detail.locator('table.kv').first().textContent()).toBeTruthy();
    const args = detail.getByRole('row', { name: /msg/ });
    expect(await args.textContent()).toContain('hello pineapple');
    expect(await detail.getByLabel('Standard output').textContent()).toContain('hello pineapple');
    await detail.getByRole('heading', { name: 'Decision trail' }).waitFor();
    const trail = ui.svc.audit.search({ requestId: 'req-audit-0001', limit: 200 });
    await expect.poll(() => detail.locator('ol.trail li').count()).toBe(trail.length);
    expect(await detail.locator('ol.trail').textContent()).toContain('claimed');
    expect(await detail.locator('ol.trail').textContent()).toContain('finished');

    // Keyboard: arrows move the selection, Enter opens it, Escape closes.
    await ui.page.getByLabel('Search', { exact: true }).fill('req-audit-0002');
    await expectShows({ text: 'req-audit-0002' });
    const want = ui.svc.audit.search({ text: 'req-audit-0002' });
    await grid().focus();
    await ui.page.keyboard.press('Home');
    await ui.page.keyboard.press('ArrowDown');
    await ui.page.keyboard.press('Enter');
    await expect.poll(() => ui.page.getByRole('heading', { level: 2, name: new RegExp(`#${want[1]!.seq}$`) }).count()).toBe(1);
    expect(await grid().getAttribute('aria-activedescendant')).toBe(`audit-row-${want[1]!.seq}`);
    await ui.page.getByRole('heading', { name: 'Arguments' }).waitFor();
    await ui.screenshots('audit-detail');
    await ui.page.keyboard.press('Escape');
    await expect.poll(() => ui.page.getByRole('complementary').count()).toBe(0);

    // Closing the panel from inside it (its × button, or Escape) puts the focus back on the list.
    const gridFocused = () => grid().evaluate((el) => el === document.activeElement);
    await ui.page.keyboard.press('Enter');
    await ui.page.getByRole('button', { name: 'Close detail' }).click();
    await expect.poll(() => ui.page.getByRole('complementary').count()).toBe(0);
    expect(await gridFocused()).toBe(true);
    await ui.page.keyboard.press('Enter');
    await ui.page.getByRole('button', { name: 'Copy message' }).focus();
    await ui.page.keyboard.press('Escape');
    await expect.poll(() => ui.page.getByRole('complementary').count()).toBe(0);
    expect(await gridFocused()).toBe(true);

    // The search survives a visit to another screen.
    await ui.page.keyboard.press('Control+4');
    await ui.page.waitForURL(/#\/keys$/);
    await ui.page.keyboard.press('Control+6');
    await ui.page.waitForURL(/#\/audit$/);
    expect(await ui.page.getByLabel('Search', { exact: true }).inputValue()).toBe('req-audit-0002');
    await expectShows({ text: 'req-audit-0002' });
    expect(ui.errors).toEqual([]);
  });

  it('each filter narrows the list exactly as the host searches: state, operation, key, kind, time range', async () => {
    // Two old entries, to find by time range (written with their own times, as a past day's log would be).
    insertAudit([
      { at: '2020-01-01T10:00:00.000Z', kind: 'notice_sent', actor: 'app', message: 'an old note from new year' },
      { at: '2020-03-01T10:00:00.000Z', kind: 'notice_sent', actor: 'app', message: 'an older note from march' },
    ]);
    await ui.open('/audit');
    await expect.poll(() => renderedSeqs().then((s) => s.length)).toBeGreaterThan(5);

    await ui.page.getByLabel('Request state').selectOption('rejected');
    await expectShows({ state: 'rejected' });
    const rejected = await grid().locator('tbody tr[id]').allTextContents();
    expect(rejected).toHaveLength(2);
    expect(rejected).toEqual(expect.arrayContaining([expect.stringContaining('req-audit-0003'), expect.stringContaining('req-audit-0004')]));
    await ui.page.getByLabel('Request state').selectOption('');

    await ui.page.getByLabel('Operation', { exact: true }).selectOption('list-documents');
    await expectShows({ op: 'list-documents' });
    expect(ui.svc.audit.search({ op: 'list-documents' }).length).toBeGreaterThanOrEqual(1);
    await ui.page.getByLabel('Operation', { exact: true }).selectOption('');

    await ui.page.getByLabel('Key', { exact: true }).selectOption(reader.key_id);
    await expectShows({ keyId: reader.key_id });
    await ui.page.getByLabel('Operation', { exact: true }).selectOption('echo');
    await expectShows({ keyId: reader.key_id, op: 'echo' }); // nothing: the reader never echoed
    await ui.page.getByRole('status').filter({ hasText: 'No entries match' }).waitFor();
    await ui.page.getByLabel('Key', { exact: true }).selectOption(agent.key_id);
    await expectShows({ keyId: agent.key_id, op: 'echo' });
    await ui.page.getByRole('button', { name: 'Clear filters' }).first().click();

    await ui.page.getByLabel('Kind', { exact: true }).selectOption('finished');
    await expectShows({ kind: 'finished' });
    await ui.page.getByLabel('Kind', { exact: true }).selectOption('');

    // A custom range around the first old entry only; then "last hour" leaves both old ones out.
    await ui.page.getByLabel('Time', { exact: true }).selectOption('custom');
    await ui.page.getByLabel('From').fill('2019-12-31T12:00');
    await ui.page.getByLabel('To').fill('2020-01-02T12:00');
    const [since, until] = await ui.page.evaluate(() => [new Date('2019-12-31T12:00').toISOString(), new Date('2020-01-02T12:00').toISOString()]);
    await expectShows({ since, until });
    expect(ui.svc.audit.search({ since, until }).map((e) => e.message)).toEqual(['an old note from new year']);
    // A backwards range is refused as you type, and says why, under the input and tied to it.
    const to = ui.page.getByLabel('To');
    const description = () => to.evaluate((el) => document.getElementById(el.getAttribute('aria-describedby') ?? '')?.textContent);
    expect(await description()).toBe('Leave either side empty for no limit.');
    await to.fill('2019-12-01T12:00');
    await expect.poll(description).toBe('"From" must be before "To".');
    expect(await to.getAttribute('aria-invalid')).toBe('true');
    await ui.screenshots('audit-range');
    await expect.poll(() => renderedSeqs()).toEqual([]); // nothing stale stays on screen
    await ui.page.getByLabel('Time', { exact: true }).selectOption('1h');
    const lastHour = ui.svc.audit.search({ since: new Date(Date.now() - 3600_000).toISOString(), limit: 10_000 });
    await expect.poll(() => countLine().textContent()).toContain(`${lastHour.length} entries`);
    expect(await grid().textContent()).not.toContain('an old note');
    expect(ui.errors).toEqual([]);
  });

  it('exports every entry of the current search as CSV and JSON Lines, quoted and formula-safe', async () => {
    const bulk: AuditEntry[] = [];
    for (let i = 0; i < 1500; i++) bulk.push({ kind: 'notice_sent', actor: 'test', message: `bulkexport entry ${i}` });
    bulk.push({ kind: 'notice_sent', actor: '=HYPERLINK("http://evil.example","click")', message: 'bulkexport, with "quotes",\nand a second line' });
    bulk.push({ kind: 'notice_sent', actor: 'test', message: '+bulkexport looks like a formula', details: { argv: ['echo', 'a,b'], n: 3 } });
    insertAudit(bulk);
    const want = ui.svc.audit.search({ text: 'bulkexport', limit: 10_000 });
    expect(want.length).toBe(1502);

    await ui.open('/audit');
    await ui.page.getByLabel('Search', { exact: true }).fill('bulkexport');
    await ui.page.getByLabel('Search', { exact: true }).press('Enter'); // searches at once, without the typing pause
    await expect.poll(() => countLine().textContent()).toContain('200 newest entries loaded');

    // CSV: all 1,502 (beyond the loaded page and beyond one export page), in the host's order.
    const [csvDownload] = await Promise.all([ui.page.waitForEvent('download'), ui.page.getByRole('button', { name: 'Export CSV' }).click()]);
    expect(csvDownload.suggestedFilename()).toMatch(/^dumbwaiter-audit-\d{4}-\d{2}-\d{2}-\d{4}\.csv$/);
    const csv = readFileSync((await csvDownload.path())!, 'utf8');
    expect(csv.startsWith('\uFEFFseq,at,kind,actor,request_id,key_id,op,message,details\r\n')).toBe(true);
    const table = parseCsv(csv.slice(1));
    expect(table[0]).toEqual(['seq', 'at', 'kind', 'actor', 'request_id', 'key_id', 'op', 'message', 'details']);
    const body = table.slice(1);
    expect(body.length).toBe(want.length);
    expect(body.map((r) => Number(r[0]))).toEqual(want.map((e) => e.seq));
    expect(body.map((r) => r[7])).toEqual(want.map((e) => (e.message.startsWith('+') ? `'${e.message}` : e.message)));
    // Quoting: the comma/quote/newline message is one cell, quotes doubled in the file.
    expect(csv).toContain('"bulkexport, with ""quotes"",\nand a second line"');
    // Formula injection: cells starting with = + - @ get a leading quote.
    const evil = body.find((r) => r[7]!.startsWith('bulkexport, with'))!;
    expect(evil[3]).toBe(`'=HYPERLINK("http://evil.example","click")`);
    const plus = body.find((r) => r[7]!.includes('looks like a formula'))!;
    expect(plus[7]).toBe("'+bulkexport looks like a formula");
    expect(JSON.parse(plus[8]!)).toEqual({ argv: ['echo', 'a,b'], n: 3 });
    await ui.page.getByRole('status').filter({ hasText: 'Exported 1,502 entries as CSV' }).waitFor();

    // JSON Lines: each line is the host's entry as is.
    const [jsonlDownload] = await Promise.all([ui.page.waitForEvent('download'), ui.page.getByRole('button', { name: 'Export JSON Lines' }).click()]);
    expect(jsonlDownload.suggestedFilename()).toMatch(/^dumbwaiter-audit-.*\.jsonl$/);
    const lines = readFileSync((await jsonlDownload.path())!, 'utf8').trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual(want);
    expect(ui.errors).toEqual([]);
  });

  it('a new search starts at the top of the list, and a fully loaded list stays so as entries come in', async () => {
    const batch: AuditEntry[] = [];
    for (let i = 0; i < 300; i++) batch.push({ kind: 'notice_sent', actor: 'test', message: `scrolltop entry ${i}` });
    insertAudit(batch);
    await ui.open('/audit');
    await expect.poll(() => countLine().textContent()).toContain('200 newest entries loaded');
    const scroller = ui.page.locator('.audit-scroll');
    const scrolled = () => scroller.evaluate((el) => el.scrollTop);
    // Counts the next pages asked for: a new search from deep in the list must not load one for the old position.
    type Paging = { __dwInvoke: (c: string, a: unknown) => Promise<unknown>; pageCalls: number };
    await ui.page.evaluate(() => {
      const w = window as unknown as Paging;
      const invoke = w.__dwInvoke;
      w.pageCalls = 0;
      w.__dwInvoke = async (c, a) => {
        if (c.endsWith('audit.search') && (a as { before?: number }).before !== undefined) w.pageCalls++;
        return invoke(c, a);
      };
    });
    const pageCalls = () => ui.page.evaluate(() => (window as unknown as Paging).pageCalls);

    // The newest entry matches each of these searches too, so only the new search says where to start.
    for (const change of [
      () => ui.page.getByLabel('Search', { exact: true }).fill('scrolltop').then(() => ui.page.getByLabel('Search', { exact: true }).press('Enter')),
      () => ui.page.getByLabel('Kind', { exact: true }).selectOption('notice_sent'),
    ]) {
      // Deep in a list longer than a page: row 250, past the end of the new search's first page.
      await scroller.evaluate((el) => (el.scrollTop = el.scrollHeight));
      await expect.poll(async () => /^(?!200 newest)[\d,]+ .*(loaded|scroll)\.$/.test((await countLine().textContent()) ?? '')).toBe(true);
      await scroller.evaluate((el) => (el.scrollTop = 250 * 34));
      await expect.poll(scrolled).toBe(250 * 34);
      const calls = await pageCalls();
      await change();
      await expect.poll(scrolled).toBe(0);
      await ui.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      expect(await pageCalls()).toBe(calls);
    }
    const want = ui.svc.audit.search({ text: 'scrolltop', kind: 'notice_sent', limit: 200 });
    await expect.poll(async () => (await renderedSeqs()).slice(0, 5)).toEqual(want.slice(0, 5).map((e) => e.seq));

    // Fully loaded, a search stays fully loaded when a new entry comes in on top.
    await ui.page.getByLabel('Kind', { exact: true }).selectOption('');
    await expect.poll(() => countLine().textContent()).toContain('200 newest entries loaded');
    await scroller.evaluate((el) => (el.scrollTop = el.scrollHeight));
    await expect.poll(() => countLine().textContent()).toContain('300 entries, newest first: all loaded');
    ui.host.submit(agent, 'req-audit-scroll', 'echo', { msg: 'scrolltop extra' });
    await ui.host.waitResult('req-audit-scroll');
    const all = ui.svc.audit.search({ text: 'scrolltop', limit: 10_000 });
    expect(all.length).toBeGreaterThan(300);
    await expect.poll(() => countLine().textContent()).toContain(`${all.length} entries, newest first: all loaded`);
    expect(await ui.page.getByRole('button', { name: 'Load more' }).count()).toBe(0);
    expect(ui.errors).toEqual([]);
  });

  it('follows the log: a new entry appears on top while the rows in view stay where they are', async () => {
    await ui.open('/audit');
    await expect.poll(() => countLine().textContent()).toContain('200 newest entries loaded');
    const scroller = ui.page.locator('.audit-scroll');
    await scroller.evaluate((el) => (el.scrollTop = 20 * 34));
    /** The first row wholly in view, and where it is in the scroller. */
    const rowInView = () =>
      scroller.evaluate((el) => {
        const top = el.getBoundingClientRect().top + 34; // below the sticky header
        const row = Array.from(el.querySelectorAll('tbody tr[id]')).find((r) => r.getBoundingClientRect().top >= top)!;
        return { id: row.id, offset: row.getBoundingClientRect().top - el.getBoundingClientRect().top };
      });
    await expect.poll(async () => (await rowInView()).id).toMatch(/^audit-row-/);
    const before = await rowInView();
    const newestBefore = ui.svc.audit.search({ limit: 1 })[0]!.seq;

    ui.host.submit(agent, 'req-audit-live', 'echo', { msg: 'live entry' });
    await ui.host.waitResult('req-audit-live');
    const added = ui.svc.audit.search({ limit: 10_000 }).filter((e) => e.seq > newestBefore);
    expect(added.length).toBeGreaterThan(1);
    expect(added.every((e) => e.request_id === 'req-audit-live')).toBe(true);
    await expect.poll(() => countLine().textContent()).toContain(`${200 + added.length} newest entries loaded`);
    // The row that was in view has not moved.
    const after = await ui.page.locator(`#${before.id}`).evaluate((row) => row.getBoundingClientRect().top - row.closest('.audit-scroll')!.getBoundingClientRect().top);
    expect(Math.abs(after - before.offset)).toBeLessThanOrEqual(1);
    // And at the top, the new entries, newest first.
    await scroller.evaluate((el) => (el.scrollTop = 0));
    await expect.poll(async () => (await renderedSeqs()).slice(0, added.length)).toEqual(added.map((e) => e.seq));
    expect(await grid().locator('tbody tr[id]').first().textContent()).toContain('req-audit-live');
    expect(ui.errors).toEqual([]);
  });

  it('a newer search wins over an older one that answers later', async () => {
    insertAudit([
      { kind: 'notice_sent', actor: 'test', message: 'slowword one' },
      { kind: 'notice_sent', actor: 'test', message: 'slowword two' },
      { kind: 'notice_sent', actor: 'test', message: 'fastword one' },
    ]);
    await ui.open('/audit');
    await expect.poll(() => renderedSeqs().then((s) => s.length)).toBeGreaterThan(5);
    type Slow = { __dwInvoke: (c: string, a: unknown) => Promise<unknown>; release: () => void; slowAsked: boolean; slowAnswered: boolean };
    await ui.page.evaluate(() => {
      const w = window as unknown as Slow;
      const invoke = w.__dwInvoke;
      const gate = new Promise<void>((resolve) => (w.release = resolve));
      w.__dwInvoke = async (c, a) => {
        if (!c.endsWith('audit.search') || (a as { text?: string }).text !== 'slowword') return invoke(c, a);
        w.slowAsked = true;
        await gate;
        const answer = await invoke(c, a);
        w.slowAnswered = true;
        return answer;
      };
    });
    const search = ui.page.getByLabel('Search', { exact: true });
    await search.fill('slowword');
    await search.press('Enter');
    await expect.poll(() => ui.page.evaluate(() => (window as unknown as Slow).slowAsked)).toBe(true);
    await search.fill('fastword');
    await search.press('Enter');
    await expectShows({ text: 'fastword' });
    // The older search answers now: its entries do not replace the newer search's.
    await ui.page.evaluate(() => (window as unknown as Slow).release());
    await expect.poll(() => ui.page.evaluate(() => (window as unknown as Slow).slowAnswered)).toBe(true);
    await ui.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    await expectShows({ text: 'fastword' });
    expect(await grid().textContent()).not.toContain('slowword');
    expect(await search.inputValue()).toBe('fastword');
    expect(ui.errors).toEqual([]);
  });

  it('a next page that fails is asked for once, says so, and loads on "Try again"', async () => {
    const batch: AuditEntry[] = [];
    for (let i = 0; i < 700; i++) batch.push({ kind: 'notice_sent', actor: 'test', message: `pagefail entry ${i}` });
    insertAudit(batch);
    await ui.open('/audit');
    await expect.poll(() => countLine().textContent()).toContain('200 newest entries loaded');
    // The host fails every next page (the calls with `before`) until the test lets it answer.
    type Paging = { __dwInvoke: (c: string, a: unknown) => Promise<unknown>; pagingFails: boolean; pageCalls: number; newestCalls: number };
    await ui.page.evaluate(() => {
      const w = window as unknown as Paging;
      const invoke = w.__dwInvoke;
      w.pagingFails = true;
      w.pageCalls = 0;
      w.newestCalls = 0;
      w.__dwInvoke = async (c, a) => {
        if (c.endsWith('audit.search') && (a as { before?: number }).before !== undefined) {
          w.pageCalls++;
          if (w.pagingFails) throw new Error('the ledger is busy');
        } else if (c.endsWith('audit.search')) w.newestCalls++;
        return invoke(c, a);
      };
    });
    const pageCalls = () => ui.page.evaluate(() => (window as unknown as Paging).pageCalls);
    const newestCalls = () => ui.page.evaluate(() => (window as unknown as Paging).newestCalls);
    /** Once it returns, the page has run the effects of everything it has rendered (where a retry would
     *  start): a change of the host's state makes the screen reload its newest entries from an effect,
     *  and React runs earlier renders' effects (and a render's children's) before that one. */
    const effectsRun = async () => {
      const before = await newestCalls();
      await ui.emit('state.changed', ui.svc.status.view());
      await expect.poll(newestCalls).toBeGreaterThan(before);
    };
    const scroller = ui.page.locator('.audit-scroll');
    await scroller.evaluate((el) => (el.scrollTop = el.scrollHeight));
    const problem = ui.page.getByRole('alert').filter({ hasText: 'Could not load more entries' });
    await problem.waitFor();
    expect(await problem.textContent()).toContain('the ledger is busy');
    // Still at the end of the list, it does not ask again by itself (it used to, dozens of times a second):
    // not once the failure is shown, nor on a scroll to the end (the alert made the list longer).
    await effectsRun();
    await scroller.evaluate(
      (el) =>
        new Promise<void>((scrolled) => {
          el.addEventListener('scroll', () => scrolled(), { once: true });
          const top = el.scrollTop;
          el.scrollTop = el.scrollHeight;
          if (el.scrollTop === top) scrolled(); // already there: no scroll event comes
        }),
    );
    await effectsRun();
    expect(await pageCalls()).toBe(1);
    expect(await countLine().textContent()).toContain('200 newest entries loaded');

    // The host answers again: "Try again" loads the page, and paging as you scroll is back on.
    await ui.page.evaluate(() => void ((window as unknown as Paging).pagingFails = false));
    await ui.page.getByRole('button', { name: 'Try again' }).click();
    await expect.poll(() => countLine().textContent()).toContain('400 newest entries loaded');
    expect(await problem.count()).toBe(0);
    await scroller.evaluate((el) => (el.scrollTop = el.scrollHeight));
    await expect.poll(() => countLine().textContent()).toContain('600 newest entries loaded');
    expect(await pageCalls()).toBe(3);
    const host = ui.svc.audit.search({ limit: 600 });
    const seqs = await renderedSeqs();
    const at = host.findIndex((e) => e.seq === seqs[0]);
    expect(seqs).toEqual(host.slice(at, at + seqs.length).map((e) => e.seq));

    // A new search after a failure pages as you scroll from the start.
    await ui.page.evaluate(() => void ((window as unknown as Paging).pagingFails = true));
    await scroller.evaluate((el) => (el.scrollTop = el.scrollHeight));
    await problem.waitFor();
    await ui.page.evaluate(() => void ((window as unknown as Paging).pagingFails = false));
    await ui.page.getByLabel('Kind', { exact: true }).selectOption('notice_sent');
    await expect.poll(() => countLine().textContent()).toContain('200 newest entries loaded');
    expect(await problem.count()).toBe(0);
    await scroller.evaluate((el) => (el.scrollTop = el.scrollHeight));
    await expect.poll(() => countLine().textContent()).toContain('400 newest entries loaded');
    expect(ui.errors).toEqual([]);
  });

  it('stays light with 100,000 entries: the first page shows, scrolling loads more, the DOM holds few rows', async () => {
    const many: AuditEntry[] = [];
    for (let i = 0; i < 100_000; i++) many.push({ kind: i % 2 ? 'claimed' : 'finished', request_id: `req-bulk-${i}`, op: 'echo', key_id: agent.key_id, message: `bulk load entry number ${i}`, details: { state: 'succeeded' } });
    insertAudit(many);
    expect(ui.svc.audit.search({ text: 'bulk load', limit: 1 })[0]!.message).toBe('bulk load entry number 99999');

    await ui.open('/audit');
    await expect.poll(() => countLine().textContent()).toContain('200 newest entries loaded');
    const newest = ui.svc.audit.search({ limit: 200 });
    await expect.poll(async () => (await renderedSeqs())[0]).toBe(newest[0]!.seq);
    await ui.screenshots('audit-100k');
    // Every row is exactly as tall as the virtual list counts on (else its spacers would drift).
    const heights = await grid().locator('tbody tr[id]').evaluateAll((rows) => [...new Set(rows.map((r) => r.getBoundingClientRect().height))]);
    expect(heights).toEqual([34]);

    // Scroll to the end of what is loaded: the next page comes.
    const scroller = ui.page.locator('.audit-scroll');
    await scroller.evaluate((el) => (el.scrollTop = el.scrollHeight));
    await expect.poll(() => countLine().textContent()).toContain('400 newest entries loaded');
    await scroller.evaluate((el) => (el.scrollTop = el.scrollHeight));
    await expect.poll(() => countLine().textContent()).toContain('600 newest entries loaded');
    // The rows in view are the host's 5xx-th newest entries, in order.
    const seqs = await renderedSeqs();
    const page3 = ui.svc.audit.search({ limit: 600 });
    const at = page3.findIndex((e) => e.seq === seqs[0]);
    expect(at).toBeGreaterThan(300);
    expect(seqs).toEqual(page3.slice(at, at + seqs.length).map((e) => e.seq));
    // Only a window of rows is in the DOM.
    expect(await ui.page.locator('tr').count()).toBeLessThan(100);

    // The keyboard still walks the list: End goes to the last loaded row and opens it.
    await grid().focus();
    await ui.page.keyboard.press('End');
    await ui.page.keyboard.press('Enter');
    await ui.page.getByRole('complementary').getByText('bulk load entry number', { exact: false }).first().waitFor();
    expect(await ui.page.locator('tr').count()).toBeLessThan(150);
    expect(ui.errors).toEqual([]);
  });

  it('does not refresh every few seconds while the window is hidden, and catches up when it shows again', async () => {
    await ui.page.clock.install();
    await ui.open('/audit');
    await expect.poll(() => renderedSeqs().then((seqs) => seqs.length)).toBeGreaterThan(5);
    type Counting = { __dwInvoke: (c: string, a: unknown) => Promise<unknown>; searches: number; hidden: boolean };
    await ui.page.evaluate(() => {
      const w = window as unknown as Counting;
      const invoke = w.__dwInvoke;
      w.searches = 0;
      w.hidden = true;
      Object.defineProperty(document, 'hidden', { configurable: true, get: () => w.hidden });
      w.__dwInvoke = async (c, a) => {
        if (c.endsWith('audit.search')) w.searches++;
        return invoke(c, a);
      };
    });
    const searches = () => ui.page.evaluate(() => (window as unknown as Counting).searches);
    // A minute hidden: the 5-second refresh skips every turn.
    for (let i = 0; i < 12; i++) await ui.page.clock.runFor(5000);
    expect(await searches()).toBe(0);
    // Shown again: it looks at once, and every few seconds after.
    await ui.page.evaluate(() => {
      (window as unknown as Counting).hidden = false;
      document.dispatchEvent(new Event('visibilitychange'));
    });
    await expect.poll(searches).toBe(1);
    await ui.page.clock.runFor(5000);
    await expect.poll(searches).toBe(2);
    expect(ui.errors).toEqual([]);
  });

  it('"Last hour" stays the last hour while the screen stays open, on screen and in the export', async () => {
    // An entry an hour and a half ahead: once the page's clock has moved on two hours, it alone is in the last hour.
    const ahead = new Date(Date.now() + 90 * 60_000).toISOString();
    insertAudit([{ at: ahead, kind: 'notice_sent', actor: 'test', message: 'clockwork entry ahead' }]);
    await ui.page.clock.install();
    await ui.open('/audit');
    await ui.page.getByLabel('Time', { exact: true }).selectOption('1h');
    await expect.poll(() => renderedSeqs().then((seqs) => seqs.length)).toBeGreaterThan(5);

    // The window stays open two hours: the next refresh brings the range up to the clock.
    await ui.page.clock.fastForward('02:00:00');
    await expect.poll(() => countLine().textContent()).toContain('1 entry, newest first: all loaded');
    expect(await grid().locator('tbody tr[id]').allTextContents()).toEqual([expect.stringContaining('clockwork entry ahead')]);
    const [download] = await Promise.all([ui.page.waitForEvent('download'), ui.page.getByRole('button', { name: 'Export JSON Lines' }).click()]);
    const lines = readFileSync((await download.path())!, 'utf8').trimEnd().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { message: string }).message)).toEqual(['clockwork entry ahead']);
    expect(ui.errors).toEqual([]);
  });
});
