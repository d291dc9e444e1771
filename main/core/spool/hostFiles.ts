// host.json (the heartbeat) and catalog.json (what this host offers): written by the host, read back
// for `status` and the app. The sandbox can replace either with anything (a FIFO, a link, a forged or
// huge file), so they are read as every spool file is (safeRead) and what they say is checked.
import { z } from 'zod';
import { writeJsonAtomic } from '../fs/atomicWrite';
import { isMissing, readSpoolJson } from './safeRead';
import { argsSchema } from '../allowlist/argsSchema';
import { opVisibleTo, type Allowlist } from '../allowlist/types';
import { APPROVALS, SCOPES } from '../../../shared/allowlist/schema';
import { MAX_HOST_JSON_BYTES, type CatalogDoc, type HostStatusDoc } from '../../../shared/protocol/types';
import { nowIso } from '../time';

/** Without fsyncs: a heartbeat is rewritten every few seconds and only says the host is alive now, so
 *  one lost in a power cut (the host died with it) says nothing false; the host writes it at start. */
export function writeHostStatus(file: string, doc: Omit<HostStatusDoc, 'v' | 'protocol' | 'heartbeat_at'>): void {
  const full: HostStatusDoc = { v: 1, protocol: 1, heartbeat_at: nowIso(), ...doc };
  writeJsonAtomic(file, full, 0o644, false);
}

/** What the agents of `spool` may ask for: the operations it sees (`spools:` in the allowlist). */
export function catalogOf(allowlist: Allowlist, spool: string): CatalogDoc {
  return {
    v: 1,
    updated_at: nowIso(),
    operations: [...allowlist.operations.values()].filter((op) => opVisibleTo(op, spool)).map((op) => ({
      name: op.name,
      description: op.description,
      scope: op.scope,
      approval: op.approval,
      timeout_s: op.timeout_s,
      args_schema: argsSchema(op),
      ...(op.reconcile ? { reconcile: true as const } : {}),
    })),
  };
}

export function writeCatalog(file: string, catalog: CatalogDoc): void {
  writeJsonAtomic(file, catalog, 0o644);
}

/** Far more than the host ever writes: a bigger catalog.json is not its own (host.json's cap is shared/protocol/types.ts's MAX_HOST_JSON_BYTES). */
export const CATALOG_JSON_MAX_BYTES = 8 * 1024 * 1024;

/** The last heartbeat in host.json, or why there is none to show (no problem while none was written yet). */
export function readHeartbeat(file: string): { heartbeat_at: string | null; problem: string | null } {
  const r = readSpoolJson(file, MAX_HOST_JSON_BYTES);
  if (!r.ok) return { heartbeat_at: null, problem: isMissing(r) ? null : `host.json ${r.reason}` };
  const at = (r.value as { heartbeat_at?: unknown } | null)?.heartbeat_at;
  if (typeof at !== 'string' || Number.isNaN(Date.parse(at))) return { heartbeat_at: null, problem: 'host.json holds no valid heartbeat_at' };
  return { heartbeat_at: at, problem: null };
}

const catalogSchema = z.object({
  v: z.literal(1),
  updated_at: z.string(),
  operations: z.array(
    z.object({
      name: z.string(),
      description: z.string(),
      scope: z.enum(SCOPES),
      approval: z.enum(APPROVALS),
      timeout_s: z.number(),
      args_schema: z.record(z.string(), z.unknown()),
      reconcile: z.literal(true).optional(),
    }),
  ),
});
/** The schema reads exactly a CatalogDoc: a field added to (or changed in) either alone fails to compile. */
type Exactly<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const catalogSchemaIsCatalogDoc: Exactly<z.infer<typeof catalogSchema>, CatalogDoc> & Exactly<keyof z.infer<typeof catalogSchema>['operations'][number], keyof CatalogDoc['operations'][number]> = true;
void catalogSchemaIsCatalogDoc;

/** catalog.json as the sandbox sees it, when it is a regular file of the catalog's shape; else null. */
export function readCatalog(file: string): CatalogDoc | null {
  const r = readSpoolJson(file, CATALOG_JSON_MAX_BYTES);
  if (!r.ok) return null;
  const doc = catalogSchema.safeParse(r.value);
  return doc.success ? doc.data : null;
}
