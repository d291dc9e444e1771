// What the runner is handed: the home's core (its ledger, stores, lifecycle and reconciler), and what
// only the daemon knows (the spools it serves and their folders, the allowlist and settings it holds,
// how runs start, how one request's failure is caught). The daemon and the tests build it here alike.
import type { HostCore } from '../hostCore';
import { scopedLogger } from '../log';
import type { RunnerDeps } from './runner';

type FromCore = 'db' | 'requests' | 'audit' | 'keys' | 'grants' | 'flags' | 'lifecycle' | 'reconciler';

export function runnerDeps(core: HostCore, own: Omit<RunnerDeps, FromCore | 'log'>): RunnerDeps {
  const { db, requests, audit, keys, grants, flags, lifecycle, reconciler } = core;
  return { db, requests, audit, keys, grants, flags, lifecycle, reconciler, log: scopedLogger('runner'), ...own };
}
