// dw's own flags whose values go into a request (--time-limit, --max-output: whole numbers; --expires:
// a duration), each refused with words naming the flag and what it takes; dw.py says the same.
import { describe, expect, it } from 'vitest';
import { FlagError, durationSeconds, positiveInteger } from '../../../../shared/client/flagValues';
import { MAX_REQUEST_LIMIT } from '../../../../shared/protocol/envelope';
import { dwPy } from '../../../helpers/clientCases';

const DAY = 24 * 3600;
const BAD_WHOLE = ['0', '-1', '2.5', '1e3', '', ' 5', '0x10', String(MAX_REQUEST_LIMIT + 1), '٥'];
const DURATIONS: [string, number][] = [['90', 90], ['45s', 45], ['30m', 1800], ['2h', 7200], ['1h30m', 5400], ['24h', DAY]];
const BAD_DURATIONS = ['', '0', '0s', '1h30', 'h', '1d', '-1h', '1.5h', 'm30', '٥s'];

describe("dw's flags that go into a request", () => {
  it('--time-limit and --max-output: a whole number from 1 up', () => {
    expect(positiveInteger(undefined, '--time-limit', 'seconds')).toBeUndefined();
    expect(positiveInteger('5', '--time-limit', 'seconds')).toBe(5);
    expect(positiveInteger(String(MAX_REQUEST_LIMIT), '--max-output', 'bytes')).toBe(MAX_REQUEST_LIMIT);
    for (const bad of BAD_WHOLE) {
      expect(() => positiveInteger(bad, '--time-limit', 'seconds')).toThrow(new FlagError(`--time-limit takes a whole number of seconds from 1 to ${MAX_REQUEST_LIMIT}, not "${bad}"`));
    }
  });

  it('--expires: a duration of at most 24 h', () => {
    for (const [text, s] of DURATIONS) expect(durationSeconds(text, '--expires', DAY)).toBe(s);
    for (const bad of BAD_DURATIONS) expect(() => durationSeconds(bad, '--expires', DAY)).toThrow(`--expires takes a duration such as 45s, 30m, 2h or 1h30m, not "${bad}"`);
    expect(() => durationSeconds('25h', '--expires', DAY)).toThrow('--expires is at most 24 h (86400 s), not 25h');
  });
});

describe('dw.py says the same', () => {
  it('of --time-limit, --max-output and --expires', () => {
    const cases = [
      ['whole', '--time-limit', '5', 'seconds'],
      ['whole', '--max-output', String(MAX_REQUEST_LIMIT), 'bytes'],
      ...BAD_WHOLE.map((bad) => ['whole', '--time-limit', bad, 'seconds']),
      ...[...DURATIONS.map(([text]) => text), ...BAD_DURATIONS, '25h'].map((text) => ['duration', text, '--expires', DAY]),
    ];
    const ts = cases.map((c) => {
      try {
        return { ok: c[0] === 'whole' ? positiveInteger(c[2] as string, c[1] as string, c[3] as string) : durationSeconds(c[1] as string, '--expires', DAY) };
      } catch (e) {
        return { error: (e as Error).message };
      }
    });
    expect(dwPy(cases)).toEqual(ts);
  });
});
