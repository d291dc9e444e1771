// host.json (the heartbeat) and catalog.json (what this host offers).
import { writeJsonAtomic } from '../fs/atomicWrite';
import { argsSchema } from '../allowlist/argsSchema';
import type { Allowlist } from '../allowlist/types';
import type { CatalogDoc, HostStatusDoc } from '../../../shared/protocol/types';
import { nowIso } from '../time';

export function writeHostStatus(file: string, doc: Omit<HostStatusDoc, 'v' | 'protocol' | 'heartbeat_at'>): void {
  const full: HostStatusDoc = { v: 1, protocol: 1, heartbeat_at: nowIso(), ...doc };
  writeJsonAtomic(file, full, 0o644);
}

export function catalogOf(allowlist: Allowlist): CatalogDoc {
  return {
    v: 1,
    updated_at: nowIso(),
    operations: [...allowlist.operations.values()].map((op) => ({
      name: op.name,
      description: op.description,
      scope: op.scope,
      approval: op.approval,
      timeout_s: op.timeout_s,
      args_schema: argsSchema(op),
    })),
  };
}

export function writeCatalog(file: string, allowlist: Allowlist): void {
  writeJsonAtomic(file, catalogOf(allowlist), 0o644);
}
