// What product bundles have in place of faults.ts (scripts/build-host.mjs): the crash points are
// test-only, so a shipped host has no way to arm them.
import type { FaultStep } from './faults';

export function faultPoint(_step: FaultStep): void {}
