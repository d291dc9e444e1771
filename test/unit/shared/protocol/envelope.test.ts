// The signed payload's optional fields of issue 14: a request's own limits and the plan it is a step of.
// Each a table of payloads, in the spirit of the protocol's vectors: what parses, and what is bad_envelope.
import { describe, expect, it } from 'vitest';
import { MAX_REQUEST_LIMIT, parsePayload } from '../../../../shared/protocol/envelope';

const base = { id: 'req-1', op: 'build', args: {}, created_at: '2026-11-29T08:00:00Z' };
const text = (extra: Record<string, unknown>) => JSON.stringify({ ...base, ...extra });

const payloads: { about: string; extra: Record<string, unknown>; value?: Record<string, unknown>; refused?: RegExp }[] = [
  { about: 'no limits, no plan: none in the value', extra: {}, value: {} },
  { about: 'a timeout and an output cap', extra: { timeout_s: 30, max_output_bytes: 4096 }, value: { timeout_s: 30, max_output_bytes: 4096 } },
  { about: 'the smallest limits', extra: { timeout_s: 1, max_output_bytes: 1 }, value: { timeout_s: 1, max_output_bytes: 1 } },
  { about: 'the largest limits', extra: { timeout_s: MAX_REQUEST_LIMIT, max_output_bytes: MAX_REQUEST_LIMIT }, value: { timeout_s: MAX_REQUEST_LIMIT, max_output_bytes: MAX_REQUEST_LIMIT } },
  { about: 'a plan id', extra: { plan_id: 'plan-7.a_b' }, value: { plan_id: 'plan-7.a_b' } },
  { about: 'a zero timeout', extra: { timeout_s: 0 }, refused: /payload\.timeout_s must be a whole number from 1 to 2147483647/ },
  { about: 'a negative output cap', extra: { max_output_bytes: -1 }, refused: /payload\.max_output_bytes must be a whole number/ },
  { about: 'a fractional timeout', extra: { timeout_s: 1.5 }, refused: /payload\.timeout_s/ },
  { about: 'a timeout as a string', extra: { timeout_s: '30' }, refused: /payload\.timeout_s/ },
  { about: 'a null timeout', extra: { timeout_s: null }, refused: /payload\.timeout_s/ },
  { about: 'a boolean output cap', extra: { max_output_bytes: true }, refused: /payload\.max_output_bytes/ },
  { about: 'a timeout past 2^31 - 1', extra: { timeout_s: 2 ** 31 }, refused: /payload\.timeout_s/ },
  { about: 'an output cap past what a double holds exactly', extra: { max_output_bytes: 1e300 }, refused: /payload\.max_output_bytes/ },
  { about: 'a plan id that is not a request id', extra: { plan_id: '../x' }, refused: /payload\.plan_id is not a valid request id/ },
  { about: 'a plan id starting with "-"', extra: { plan_id: '-rf' }, refused: /payload\.plan_id/ },
  { about: 'an empty plan id', extra: { plan_id: '' }, refused: /payload\.plan_id/ },
  { about: 'a plan id as a number', extra: { plan_id: 7 }, refused: /payload\.plan_id/ },
  { about: 'a plan id as an object', extra: { plan_id: { id: 'p' } }, refused: /payload\.plan_id/ },
];

describe('payloads', () => {
  it.each(payloads)('$about', ({ extra, value, refused }) => {
    const r = parsePayload(text(extra));
    if (refused) {
      expect(r.ok).toBe(false);
      expect(!r.ok && r.message).toMatch(refused);
    } else expect(r).toEqual({ ok: true, value: { ...base, ...value } });
  });

  it('1.0 in the JSON is the integer 1 (JSON has one kind of number)', () => {
    expect(parsePayload('{"id":"a","op":"x","created_at":"2026-11-29T08:00:00Z","timeout_s":1.0}')).toMatchObject({ ok: true, value: { timeout_s: 1 } });
  });
});
