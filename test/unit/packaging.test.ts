// Packaging, checked without packaging (Electron's binary cannot be downloaded here): electron-builder.yml
// against electron-builder's own schema, the Electron fuses, the generated icons, and that `npm install`
// never rebuilds native modules for Electron.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflateSync } from 'node:zlib';
import Ajv from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { generateIcons, LINUX_SIZES, TRAY_COLOURS, TRAY_STATES } from '../../scripts/icons.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(import.meta.url);

// app-builder-lib is electron-builder's own dependency: resolve it from there, the version that packages.
const fromBuilder = createRequire(require.resolve('electron-builder/package.json'));
const SCHEMA_PATH = fromBuilder.resolve('app-builder-lib/scheme.json');
const schema = JSON.parse(readFileSync(SCHEMA_PATH, 'utf8')) as object;

type Config = Record<string, unknown> & {
  electronFuses?: Record<string, unknown>;
  extraResources?: { from: string; to: string; filter?: string[] }[];
  linux?: Record<string, unknown>;
  mac?: Record<string, unknown>;
  win?: Record<string, unknown>;
};
const loadConfig = (): Config => YAML.parse(readFileSync(path.join(ROOT, 'electron-builder.yml'), 'utf8')) as Config;

// electron-builder validates with these options (app-builder-lib/out/util/config/schemaValidator.js), except
// that it also coerces types ("true" for true); here types must be right as written.
const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(schema);
const schemaErrors = (config: unknown): string[] =>
  validate(structuredClone(config)) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`);

describe('electron-builder.yml', () => {
  it('is valid against electron-builder’s JSON schema', () => {
    expect(schemaErrors(loadConfig())).toEqual([]);
  });

  it('passes electron-builder’s own validation, the one it runs before packaging', async () => {
    const { validateConfiguration } = fromBuilder('app-builder-lib/out/util/config/config.js') as {
      validateConfiguration: (config: unknown, debugLogger: { isEnabled: boolean }) => Promise<void>;
    };
    await expect(validateConfiguration(loadConfig(), { isEnabled: false })).resolves.toBeUndefined();
  });

  it.each([
    ['an unknown top-level key', '', (c: Config) => ({ ...c, electronFusez: c.electronFuses })],
    ['a misspelt fuse', '/electronFuses', (c: Config) => ({ ...c, electronFuses: { ...c.electronFuses, runAsNod: false } })],
    ['a fuse that is not a boolean', '/electronFuses/runAsNode', (c: Config) => ({ ...c, electronFuses: { ...c.electronFuses, runAsNode: 'no' } })],
    ['asar given as a string', '/asar', (c: Config) => ({ ...c, asar: 'yes please' })],
    ['an Info.plist key outside extendInfo', '/mac', (c: Config) => ({ ...c, mac: { ...c.mac, LSUIElement: true } })],
    ['an extraResources filter that is a number', '/extraResources/0/filter', (c: Config) => ({ ...c, extraResources: [{ from: 'a', to: 'b', filter: 3 }] })],
  ])('a broken copy fails validation: %s', (_name, where, breakIt) => {
    const errors = schemaErrors(breakIt(loadConfig()));
    expect(errors.filter((e) => e.startsWith(`${where || '/'} `)), errors.join('\n')).not.toEqual([]);
  });

  it('sets the Electron fuses', () => {
    expect(loadConfig().electronFuses).toEqual({
      runAsNode: false,
      enableCookieEncryption: true,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
      resetAdHocDarwinSignature: true,
    });
  });

  it('packs the app into an archive and unpacks the native module, rebuilt for Electron when packaging', () => {
    const c = loadConfig();
    expect(c.appId).toBe('dev.dumbwaiter.app');
    expect(c.productName).toBe('Dumbwaiter');
    expect(c.asar).toBe(true);
    expect(c.asarUnpack).toContain('**/node_modules/better-sqlite3/**');
    expect(c.npmRebuild).toBe(true);
    expect(c.files).toEqual(expect.arrayContaining(['dist/**', 'package.json']));
  });

  it('leaves the tests’ build of the host, with its fault points, out of the app', () => {
    expect(loadConfig().files).toContain('!dist/test-host/**');
  });

  it('ships the tray icons outside the archive, and the sandbox clients inside it (dist/sandbox)', () => {
    const resources = loadConfig().extraResources ?? [];
    expect(resources).toEqual([expect.objectContaining({ from: 'build/icons/tray', to: 'tray' })]);
    expect(loadConfig().files).toContain('dist/**');
  });

  it('targets AppImage and deb, dmg and nsis', () => {
    const c = loadConfig();
    expect(c.linux?.target).toEqual(['AppImage', 'deb']);
    expect(c.linux?.category).toBe('Development');
    expect(JSON.stringify(c.mac?.target)).toContain('"dmg"');
    expect(JSON.stringify(c.win?.target)).toContain('"nsis"');
  });
});

// ---------------------------------------------------------------------------------------------------------
// PNG reading, enough to check what the generator writes: every chunk's CRC, IHDR, and the pixels.

interface Png {
  width: number;
  height: number;
  bitDepth: number;
  colourType: number;
  /** RGBA, 8 bits a channel. */
  pixels: Uint8Array;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (bytes: Uint8Array): number => {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 255]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};

function readPng(file: string): Png {
  const buf = readFileSync(file);
  expect(buf.subarray(0, 8).toString('hex'), `${file}: PNG signature`).toBe('89504e470d0a1a0a');
  const chunks: { type: string; data: Buffer }[] = [];
  for (let at = 8; at < buf.length; ) {
    const length = buf.readUInt32BE(at);
    const type = buf.toString('latin1', at + 4, at + 8);
    const data = buf.subarray(at + 8, at + 8 + length);
    expect(buf.readUInt32BE(at + 8 + length), `${file}: CRC of ${type}`).toBe(crc32(buf.subarray(at + 4, at + 8 + length)));
    chunks.push({ type, data });
    at += 12 + length;
  }
  expect(chunks[0]?.type, `${file}: IHDR comes first`).toBe('IHDR');
  expect(chunks.at(-1)?.type, `${file}: IEND comes last`).toBe('IEND');
  const ihdr = chunks[0]!.data;
  const png = { width: ihdr.readUInt32BE(0), height: ihdr.readUInt32BE(4), bitDepth: ihdr[8]!, colourType: ihdr[9]! };
  expect([png.bitDepth, png.colourType, ihdr[10], ihdr[11], ihdr[12]], `${file}: 8-bit RGBA, not interlaced`).toEqual([8, 6, 0, 0, 0]);

  const raw = inflateSync(Buffer.concat(chunks.filter((c) => c.type === 'IDAT').map((c) => c.data)));
  const stride = png.width * 4;
  expect(raw.length, `${file}: image data length`).toBe((stride + 1) * png.height);
  const pixels = new Uint8Array(stride * png.height);
  for (let y = 0; y < png.height; y++) {
    const filter = raw[y * (stride + 1)]!;
    expect(filter, `${file}: filter type of row ${y}`).toBeLessThanOrEqual(4);
    for (let i = 0; i < stride; i++) {
      const x = raw[y * (stride + 1) + 1 + i]!;
      const a = i >= 4 ? pixels[y * stride + i - 4]! : 0;
      const b = y > 0 ? pixels[(y - 1) * stride + i]! : 0;
      const c = y > 0 && i >= 4 ? pixels[(y - 1) * stride + i - 4]! : 0;
      const p = a + b - c;
      const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
      const paeth = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      const predicted = [0, a, b, (a + b) >> 1, paeth][filter]!;
      pixels[y * stride + i] = (x + predicted) & 255;
    }
  }
  return { ...png, pixels };
}

const alphaAt = (png: Png, x: number, y: number): number => png.pixels[(y * png.width + x) * 4 + 3]!;

/** The most frequent colour among the fully opaque pixels, as #rrggbb. */
function mainColour(png: Png): string {
  const counts = new Map<string, number>();
  for (let i = 0; i < png.pixels.length; i += 4) {
    if (png.pixels[i + 3] !== 255) continue;
    const hex = `#${Array.from(png.pixels.subarray(i, i + 3), (v) => v.toString(16).padStart(2, '0')).join('')}`;
    counts.set(hex, (counts.get(hex) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 'none';
}

describe('the icons, generated from one source', () => {
  let out: string;
  let written: string[];
  const file = (rel: string): string => path.join(out, rel);

  beforeAll(() => {
    out = mkdtempSync(path.join(os.tmpdir(), 'dw-icons-'));
    written = generateIcons(out);
  });
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  const expected: [string, number][] = [
    ['icon.png', 1024],
    ['256x256.png', 256],
    ['512x512.png', 512],
    ...LINUX_SIZES.map((s): [string, number] => [`linux/${s}x${s}.png`, s]),
    ...TRAY_STATES.flatMap((state) =>
      ['', 'Template'].flatMap((kind): [string, number][] => [
        [`tray/${state}${kind}.png`, 16],
        [`tray/${state}${kind}@2x.png`, 32],
      ]),
    ),
  ];

  it('writes every expected file and reports exactly those', () => {
    const rel = written.map((f) => path.relative(out, f).split(path.sep).join('/'));
    expect(rel.sort()).toEqual(expected.map(([f]) => f).sort());
  });

  it.each(expected)('%s is a valid PNG of %i px square', (rel, size) => {
    const png = readPng(file(rel));
    expect([png.width, png.height]).toEqual([size, size]);
    expect(png.pixels.some((v, i) => i % 4 === 3 && v === 255), 'has opaque pixels').toBe(true);
  });

  it('the app icon is a rounded square on transparent corners, as the macOS grid wants', () => {
    const png = readPng(file('icon.png'));
    expect(alphaAt(png, 0, 0)).toBe(0);
    expect(alphaAt(png, 1023, 1023)).toBe(0);
    expect(alphaAt(png, 512, 512)).toBe(255);
    expect(alphaAt(png, 110, 110)).toBe(0); // inside the body's box but outside its rounded corner
  });

  it('every icon electron-builder.yml points at is one the generator writes', () => {
    const config = loadConfig();
    const inOut = (p: unknown): string => path.relative('build/icons', String(p)).split(path.sep).join('/');
    for (const icon of [config.mac?.icon, config.win?.icon]) expect(written.map((f) => path.relative(out, f))).toContain(inOut(icon));
    expect(inOut(config.linux?.icon)).toBe('linux');
    const tray = config.extraResources?.find((r) => r.to === 'tray');
    expect(inOut(tray?.from)).toBe('tray');
  });

  it('the tray icons differ between states, in colour and in shape', () => {
    for (const suffix of ['', '@2x', 'Template', 'Template@2x']) {
      const images = TRAY_STATES.map((state) => Buffer.from(readPng(file(`tray/${state}${suffix}.png`)).pixels).toString('hex'));
      expect(new Set(images).size, `tray/*${suffix}.png all differ`).toBe(TRAY_STATES.length);
    }
    for (const state of TRAY_STATES) {
      for (const suffix of ['', '@2x']) {
        expect(mainColour(readPng(file(`tray/${state}${suffix}.png`))), `tray/${state}${suffix}.png`).toBe(TRAY_COLOURS[state]);
      }
    }
    expect(new Set(Object.values(TRAY_COLOURS)).size).toBe(TRAY_STATES.length);
  });

  it('the macOS template icons are black on transparent only, so that macOS can tint them', () => {
    for (const state of TRAY_STATES) {
      for (const suffix of ['Template', 'Template@2x']) {
        const png = readPng(file(`tray/${state}${suffix}.png`));
        const coloured = png.pixels.findIndex((v, i) => i % 4 !== 3 && v !== 0);
        expect(coloured, `tray/${state}${suffix}.png has a non-black pixel`).toBe(-1);
      }
    }
  });

  it('runs as a script, and writes the same bytes again', () => {
    const again = mkdtempSync(path.join(os.tmpdir(), 'dw-icons-cli-'));
    try {
      const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts', 'icons.ts'), again], { cwd: ROOT, encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
      for (const [rel] of expected) expect(readFileSync(path.join(again, rel)).equals(readFileSync(file(rel))), rel).toBe(true);
    } finally {
      rmSync(again, { recursive: true, force: true });
    }
  });
});

describe('npm install on a machine that cannot download Electron', () => {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    scripts?: Record<string, string>;
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
  };
  // The scripts npm runs by itself during `npm install` / `npm ci` in this package.
  const INSTALL_HOOKS = ['preinstall', 'install', 'postinstall', 'prepublish', 'preprepare', 'prepare', 'postprepare', 'dependencies'];
  const REBUILDS_FOR_ELECTRON = /install-app-deps|electron-rebuild|@electron\/rebuild|electron-builder|node-gyp|prebuild-install/;

  it('runs no script that rebuilds native modules for Electron at install time', () => {
    for (const hook of INSTALL_HOOKS) {
      const script = pkg.scripts?.[hook];
      if (script !== undefined) expect(script, `scripts.${hook}`).not.toMatch(REBUILDS_FOR_ELECTRON);
    }
  });

  it('keeps Electron and the packager out of the runtime dependencies', () => {
    for (const name of ['electron', 'electron-builder', '@electron/rebuild', 'electron-rebuild']) {
      expect(pkg.dependencies?.[name], `dependencies.${name}`).toBeUndefined();
    }
    expect(pkg.devDependencies?.electron).toBeDefined();
  });

  it('has the icons script', () => {
    expect(pkg.scripts?.icons).toBe('node --import tsx scripts/icons.ts');
  });
});
