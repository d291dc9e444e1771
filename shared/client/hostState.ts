// Whether the host is running, from host.json: a stopped host must not look like a slow one (a
// request "still unclaimed" forever). The daemon rewrites host.json every 5 s and sets `up: false` when
// it stops cleanly; a heartbeat older than 20 s means it stopped without saying so (a crash, a sleep).
import path from 'node:path';
import { readSpoolFile } from './spoolFiles';
import { MAX_HOST_JSON_BYTES, type HostStatusDoc } from '../protocol/types';
import { PROBE_VERDICTS, type ProbeVerdict } from '../protocol/probe';
import { visible } from '../text/visible';

export const HEARTBEAT_STALE_MS = 20_000;
/** A heartbeat further ahead than this is no heartbeat: else a forged one would say "running" for ever. */
export const HEARTBEAT_FUTURE_MS = 60_000;
/** Anyone can write host.json: a version is shown only if it looks like one (no escapes, no new lines). */
const VERSION = /^[\w.+-]{1,40}$/;

export interface HostState {
  running: boolean;
  /** The last heartbeat (ISO time) of a host that is not running; null if it never ran. */
  since: string | null;
  paused: boolean;
  /** Why a running host takes no new requests now (no room for its ledger, say), escaped; else null. */
  held: string | null;
  version: string | null;
  /** One line saying all of the above, for a human or an agent. */
  text: string;
  /** The host's probe of this spool's mount (no file events: it rescans on an interval), when host.json has one. */
  probe: { verdict: ProbeVerdict; summary: string } | null;
}

const VERDICTS = new Set<string>(PROBE_VERDICTS);

/** host.json's probe, when it has the probe's shape (anyone can write host.json: the caller escapes the summary). */
function probeOf(doc: Partial<HostStatusDoc>): HostState['probe'] {
  const p = doc.probe as { verdict?: unknown; summary?: unknown } | undefined;
  if (typeof p !== 'object' || p === null || !VERDICTS.has(p.verdict as string) || typeof p.summary !== 'string') return null;
  return { verdict: p.verdict as ProbeVerdict, summary: p.summary.slice(0, 300) };
}

const pad = (n: number) => String(n).padStart(2, '0');

/** A time stamp in this machine's local time: the time only if it is today, else with the date. */
export function localTime(iso: string, now = new Date()): string {
  const t = new Date(iso);
  const time = `${pad(t.getHours())}:${pad(t.getMinutes())}:${pad(t.getSeconds())}`;
  return t.toDateString() === now.toDateString() ? time : `${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())} ${time}`;
}

export function hostStateOf(doc: Partial<HostStatusDoc> | null, nowMs = Date.now()): HostState {
  if (doc === null) return { running: false, since: null, paused: false, held: null, version: null, text: 'the host has never run on this spool (no host.json)', probe: null };
  const state = stateOf(doc, nowMs);
  // Anyone can write host.json: the reason is shown escaped and bounded, and only a running host holds.
  const held = state.running && typeof doc.held === 'string' ? visible(doc.held.slice(0, 300)) : null;
  return { ...state, held, text: held ? `${state.text}, but takes no new requests: ${held}` : state.text, probe: probeOf(doc) };
}

function stateOf(doc: Partial<HostStatusDoc>, nowMs: number): Omit<HostState, 'probe' | 'held'> {
  const version = typeof doc.app_version === 'string' ? (VERSION.test(doc.app_version) ? doc.app_version : '?') : null;
  const paused = doc.paused === true;
  const beat = typeof doc.heartbeat_at === 'string' ? Date.parse(doc.heartbeat_at) : NaN;
  if (Number.isNaN(beat)) return { running: false, since: null, paused, version, text: 'the host is not running (host.json has no heartbeat)' };
  if (beat - nowMs > HEARTBEAT_FUTURE_MS) {
    return { running: false, since: null, paused, version, text: "the host is not running as far as host.json tells: its heartbeat is in the future, so its clock or the file is wrong" };
  }
  const since = doc.heartbeat_at!;
  if (doc.up === false || nowMs - beat > HEARTBEAT_STALE_MS) {
    return { running: false, since, paused, version, text: `the host is not running (since ${localTime(since, new Date(nowMs))}, per host.json)` };
  }
  const text = `the host is running (${version ? `Dumbwaiter ${version}, ` : ''}per host.json)${paused ? ', paused: requests are checked but nothing starts until it is resumed' : ''}`;
  return { running: true, since: null, paused, version, text };
}

/** Whether requests start as they come: the host runs, is not paused and holds nothing back. */
export function startsRequests(host: HostState): boolean {
  return host.running && !host.paused && host.held === null;
}

export function readHostState(spool: string): HostState {
  const r = readSpoolFile(path.join(spool, 'host.json'), MAX_HOST_JSON_BYTES);
  if (!r.ok) return hostStateOf(r.why === 'missing' ? null : {});
  try {
    const doc = JSON.parse(r.data.toString('utf8')) as unknown;
    return hostStateOf(typeof doc === 'object' && doc !== null && !Array.isArray(doc) ? (doc as Partial<HostStatusDoc>) : {});
  } catch {
    return hostStateOf({});
  }
}
