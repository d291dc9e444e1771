// The audit screen's pure parts in Node: CSV cells (quoting, formula injection whatever separator the
// spreadsheet splits on), JSON Lines that every reader splits into the same lines, the filters' search,
// relative ranges brought up to the clock, the custom range's validation, and how kinds are coloured
// and described.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { csvCell, exportFile, exportFileName } from '../../../../../renderer/screens/audit/exportFormat';
import { inRange, isoToLocalInput, kindAbout, kindTone, moveOn, NO_FILTERS, rangeError, toQuery, type Filters } from '../../../../../renderer/screens/audit/query';
import type { AuditView } from '../../../../../shared/ipc/views';

const f = (patch: Partial<Filters>): Filters => ({ ...NO_FILTERS, ...patch });

const entry = (patch: Partial<AuditView>): AuditView => ({ seq: 7, at: '2026-01-02T03:04:05.000Z', kind: 'notice_sent', actor: 'app', request_id: null, key_id: null, op: null, spool: null, message: '', details: null, ...patch });

/** The fields a spreadsheet may see in a CSV file, whichever of `,` `;` tab it takes for the separator
 *  (and whether or not it honours our quotes): every piece between separators and line breaks, with
 *  the quotes and spaces a field may start with taken off. */
function fieldsAnyHowSplit(csv: string): string[] {
  return csv
    .replace(/^\uFEFF/, '')
    .split(/[,;\t\r\n]/)
    .map((piece) => piece.replace(/^[" ]*/, ''));
}
const FORMULA = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;
/** Text rich in what makes a formula: separators, line breaks, quotes, spaces and formula characters. */
const hostile = fc.string({ unit: fc.constantFrom(',', ';', '\t', '\r', '\n', '"', ' ', '=', '+', '-', '@', '\uFF1D', '\uFF0B', '\uFF0D', '\uFF20', 'x', '1', '(', ')'), maxLength: 30 });

describe('csvCell', () => {
  it('leaves plain values as they are, and empty for null and undefined', () => {
    expect(csvCell('plain text')).toBe('plain text');
    expect(csvCell(42)).toBe('42');
    expect(csvCell(null)).toBe('');
    expect(csvCell(undefined)).toBe('');
    expect(csvCell('a-b=c')).toBe('a-b=c'); // formula characters only count at the start
  });

  it('quotes a value with a comma, a quote or a line break, doubling its quotes (RFC 4180)', () => {
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('one\ntwo')).toBe('"one\ntwo"');
    expect(csvCell('one\r\ntwo')).toBe('"one\r\ntwo"');
  });

  it('neutralises every formula prefix with a leading quote: = + - @ tab CR', () => {
    expect(csvCell('=1+1')).toBe("'=1+1");
    expect(csvCell('+cmd')).toBe("'+cmd");
    expect(csvCell('-2')).toBe("'-2");
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvCell('\tx')).toBe("'\tx");
    expect(csvCell('\rx')).toBe(`"'\rx"`); // and quoted, for the line break
    expect(csvCell('=HYPERLINK("http://evil.example","click")')).toBe(`"'=HYPERLINK(""http://evil.example"",""click"")"`);
  });

  it('neutralises a formula after a separator inside a value, for a spreadsheet that splits on ; or tab', () => {
    expect(csvCell('x;=SUM(40+2);y')).toBe("x;'=SUM(40+2);y");
    expect(csvCell('x\t@SUM(1)')).toBe("x\t'@SUM(1)");
    expect(csvCell('a,"=1"')).toBe(`"a,""'=1"""`);
    expect(csvCell('line\n+1')).toBe(`"line\n'+1"`);
    expect(csvCell('\uFF1DSUM(1)')).toBe("'\uFF1DSUM(1)");
    expect(csvCell('a-b;c=d')).toBe('a-b;c=d'); // only where a field can start
  });

  it('lets no field start a formula, whether the file is split on a comma, a semicolon or a tab', () => {
    const attack = exportFile('csv', [entry({ message: 'x;=SUM(40+2);y', op: 'a\t-1', details: { file: 'q;@evil.json', argv: ['rm', '-f'] } })]).text;
    for (const field of fieldsAnyHowSplit(attack)) expect(field).not.toMatch(FORMULA);
    fc.assert(
      fc.property(hostile, hostile, hostile, (message, op, detail) => {
        const csv = exportFile('csv', [entry({ message, op, details: { detail } })]).text;
        for (const field of fieldsAnyHowSplit(csv)) expect(field).not.toMatch(FORMULA);
      }),
    );
  });

  it('writes objects as JSON, quoted (JSON holds quotes)', () => {
    expect(csvCell({ argv: ['echo', 'a'], n: 3 })).toBe('"{""argv"":[""echo"",""a""],""n"":3}"');
    expect(csvCell({ n: 3 })).toBe('"{""n"":3}"');
  });

  it('makes whole files: CSV with a byte-order mark and CRLF, JSON Lines one entry per line; a dated name', () => {
    const e = entry({ message: 'hi, there' });
    const csv = exportFile('csv', [e]);
    expect(csv.mime).toBe('text/csv');
    expect(csv.text).toBe('\uFEFFseq,at,kind,actor,request_id,key_id,op,message,details\r\n7,2026-01-02T03:04:05.000Z,notice_sent,app,,,,"hi, there",\r\n');
    expect(exportFile('jsonl', [e, e]).text).toBe(`${JSON.stringify(e)}\n${JSON.stringify(e)}\n`);
    expect(exportFile('jsonl', []).text).toBe('');
    expect(exportFileName('csv', new Date(2026, 0, 2, 3, 4))).toBe('dumbwaiter-audit-2026-01-02-0304.csv');
  });
});

describe('JSON Lines export', () => {
  it('escapes U+2028, U+2029 and U+0085 (line breaks to some readers) and bidi controls, and stays the same JSON', () => {
    const e = entry({ message: 'a\u2028b\u2029c\u0085d\u202ee' });
    const text = exportFile('jsonl', [e]).text;
    expect(text).not.toMatch(/[\u2028\u2029\u0085\u202e]/);
    expect(text).toContain('a\\u2028b\\u2029c\\u0085d\\u202ee');
    expect(JSON.parse(text)).toEqual(e);
  });

  it('gives one valid JSON entry per line, whatever a reader counts as a line break', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: fc.oneof(fc.constantFrom('\u2028', '\u2029', '\u0085', '\r', '\n'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })) }), { maxLength: 5 }), (messages) => {
        const entries = messages.map((message) => entry({ message, details: { message } }));
        const lines = exportFile('jsonl', entries).text.split(/\r\n|[\n\r\u2028\u2029\u0085]/);
        expect(lines.pop()).toBe('');
        expect(lines.map((l) => JSON.parse(l))).toEqual(entries);
      }),
    );
  });
});

describe('toQuery', () => {
  const now = Date.parse('2026-06-01T12:00:00.000Z');

  it('makes no conditions from no filters', () => {
    expect(toQuery(NO_FILTERS, now)).toEqual({});
  });

  it('carries each filter, trimming the text', () => {
    expect(toQuery(f({ text: '  hello  ', state: 'failed', op: 'echo', keyId: 'k1', kind: 'finished' }), now)).toEqual({ text: 'hello', state: 'failed', op: 'echo', keyId: 'k1', kind: 'finished' });
    expect(toQuery(f({ text: '   ' }), now)).toEqual({});
    expect(toQuery(f({ text: 'x'.repeat(600) }), now)!.text).toHaveLength(500);
  });

  it('counts a relative range back from now', () => {
    expect(toQuery(f({ range: '1h' }), now)).toEqual({ since: '2026-06-01T11:00:00.000Z' });
    expect(toQuery(f({ range: '7d' }), now)).toEqual({ since: '2026-05-25T12:00:00.000Z' });
    expect(toQuery(f({ range: 'any' }), now)).toEqual({});
  });

  it('turns a custom range (local time) into ISO instants, either side optional; null while invalid', () => {
    const from = '2020-01-01T10:00';
    const to = '2020-01-02T10:00';
    expect(toQuery(f({ range: 'custom', from, to }), now)).toEqual({ since: new Date(from).toISOString(), until: new Date(to).toISOString() });
    expect(toQuery(f({ range: 'custom', from }), now)).toEqual({ since: new Date(from).toISOString() });
    expect(toQuery(f({ range: 'custom', to }), now)).toEqual({ until: new Date(to).toISOString() });
    expect(toQuery(f({ range: 'custom', from: to, to: from }), now)).toBeNull();
  });
});

describe('relative ranges follow the clock', () => {
  const t0 = Date.parse('2026-06-01T12:00:00.000Z');

  it('moves a "last hour" search on once its start is more than a minute behind, and only then', () => {
    const filters = f({ range: '1h', text: 'x' });
    const made = toQuery(filters, t0)!;
    expect(moveOn(made, toQuery(filters, t0 + 30_000))).toBeNull();
    const later = toQuery(filters, t0 + 86400_000)!;
    expect(moveOn(made, later)).toEqual({ text: 'x', since: '2026-06-02T11:00:00.000Z' });
    // Absolute ranges and no range never move.
    const custom = toQuery(f({ range: 'custom', from: '2020-01-01T10:00' }), t0)!;
    expect(moveOn(custom, custom)).toBeNull();
    expect(moveOn({}, {})).toBeNull();
    expect(moveOn(made, null)).toBeNull();
  });

  it('keeps only the entries still inside the range', () => {
    const at = (iso: string) => ({ at: iso });
    const entries = [at('2026-06-01T12:30:00.000Z'), at('2026-06-01T11:30:00.000Z'), at('2026-06-01T10:30:00.000Z')];
    expect(inRange(entries, { since: '2026-06-01T11:00:00.000Z' })).toEqual(entries.slice(0, 2));
    expect(inRange(entries, { since: '2026-06-01T11:00:00.000Z', until: '2026-06-01T12:00:00.000Z' })).toEqual([entries[1]]);
    expect(inRange(entries, {})).toEqual(entries);
  });
});

describe('rangeError', () => {
  it('says nothing for presets or a good custom range', () => {
    expect(rangeError(f({ range: '24h', from: 'junk' }))).toBeNull();
    expect(rangeError(f({ range: 'custom' }))).toBeNull();
    expect(rangeError(f({ range: 'custom', from: '2020-01-01T10:00', to: '2020-01-01T11:00' }))).toBeNull();
  });

  it('names the input at fault', () => {
    expect(rangeError(f({ range: 'custom', from: 'not a date' }))).toEqual({ field: 'from', message: '"From" is not a valid date and time.' });
    expect(rangeError(f({ range: 'custom', to: 'nope' }))).toEqual({ field: 'to', message: '"To" is not a valid date and time.' });
    expect(rangeError(f({ range: 'custom', from: '2020-01-02T10:00', to: '2020-01-01T10:00' }))).toEqual({ field: 'to', message: '"From" must be before "To".' });
    expect(rangeError(f({ range: 'custom', from: '2020-01-01T10:00', to: '2020-01-01T10:00' }))?.field).toBe('to');
  });
});

describe('isoToLocalInput', () => {
  it('gives the local time as a datetime-local value, two digits each', () => {
    expect(isoToLocalInput(new Date(2024, 0, 5, 7, 3).toISOString())).toBe('2024-01-05T07:03');
    expect(isoToLocalInput(new Date(2024, 11, 31, 23, 59, 59).toISOString())).toBe('2024-12-31T23:59');
  });

  it('round-trips through toQuery', () => {
    const iso = new Date(2025, 5, 15, 9, 30).toISOString();
    expect(toQuery(f({ range: 'custom', from: isoToLocalInput(iso) }))).toEqual({ since: iso });
  });
});

describe('kindTone and kindAbout', () => {
  it('colour and describe the kinds this host writes', () => {
    expect(kindTone('reconciled')).toBe('good');
    expect(kindTone('uncertain')).toBe('bad');
    expect(kindTone('orphaned')).toBe('warn');
    expect(kindAbout('orphaned')).toMatch(/outlived the host/);
  });

  it('leave a kind this app does not know neutral and undescribed, even a name of Object.prototype', () => {
    for (const kind of ['from_a_newer_host', 'constructor', '__proto__', 'toString']) {
      expect(kindTone(kind)).toBe('neutral');
      expect(kindAbout(kind)).toBeNull();
    }
  });
});
