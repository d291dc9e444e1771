// What-if preload for bench/profile.ts (never used by `npm run bench`): the daemon without durability.
// Every fsync from JavaScript becomes a no-op, and the ledger's `synchronous = FULL` becomes OFF, so the
// difference to the default run is what the fsyncs cost. Loaded with `node --import` before the CLI.
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import Database from 'better-sqlite3';

fs.fsyncSync = () => {};
syncBuiltinESMExports(); // `import { fsyncSync } from 'node:fs'` in the daemon sees the change too

const pragma = Database.prototype.pragma;
Database.prototype.pragma = function (source, options) {
  if (/^\s*synchronous\s*=/i.test(source)) source = 'synchronous = OFF';
  return pragma.call(this, source, options);
};
