// Every icon the desktop app ships, drawn from one description in this file: the app icon (electron-builder
// turns build/icons/icon.png into .icns and .ico), the Linux set and the tray icons for each state, coloured
// (Windows, Linux) and as macOS template images (black on transparent; macOS tints them for light and dark
// menu bars, so the states differ by shape). No dependencies: shapes are tested point by point, every pixel is
// supersampled for anti-aliasing, and the PNG is encoded by hand with node:zlib. The output is deterministic.
//
//   node --import tsx scripts/icons.ts [outDir]      (default: build/icons, git-ignored)
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';

export const TRAY_STATES = ['idle', 'running', 'approval', 'attention'] as const;
export type TrayState = (typeof TRAY_STATES)[number];
export const LINUX_SIZES = [16, 32, 48, 64, 128, 256, 512] as const;

/** Straight (not premultiplied) colour, each channel 0..1. */
type RGBA = readonly [number, number, number, number];
/** [x0, y0, x1, y1]: a box that holds the whole shape, so that pixels outside it skip the shape's test. */
type Box = readonly [number, number, number, number];
/** A shape in the unit square, y downwards: is the point (x, y) inside it? */
interface Shape {
  inside: (x: number, y: number) => boolean;
  box: Box;
}
type Paint = RGBA | ((x: number, y: number) => RGBA);
/** Layers are painted in order, each over those before it. */
type Layer = { shape: Shape; paint: Paint };

// ---------------------------------------------------------------------------------------------------------
// Shapes (unit coordinates)

function roundedRectSdf(x0: number, y0: number, x1: number, y1: number, r: number): (x: number, y: number) => number {
  const cx = (x0 + x1) / 2;
  const cy = (y0 + y1) / 2;
  const hx = (x1 - x0) / 2 - r;
  const hy = (y1 - y0) / 2 - r;
  return (x, y) => {
    const qx = Math.abs(x - cx) - hx;
    const qy = Math.abs(y - cy) - hy;
    return Math.hypot(Math.max(qx, 0), Math.max(qy, 0)) + Math.min(Math.max(qx, qy), 0) - r;
  };
}

const rect = (x0: number, y0: number, x1: number, y1: number): Shape => ({
  inside: (x, y) => x >= x0 && x < x1 && y >= y0 && y < y1,
  box: [x0, y0, x1, y1],
});

/** Everything in the box: for paints that shade themselves (a shadow). */
const region = (x0: number, y0: number, x1: number, y1: number): Shape => ({ inside: () => true, box: [x0, y0, x1, y1] });

function roundedRect(x0: number, y0: number, x1: number, y1: number, r: number): Shape {
  const sdf = roundedRectSdf(x0, y0, x1, y1, r);
  return { inside: (x, y) => sdf(x, y) <= 0, box: [x0, y0, x1, y1] };
}

/** The band of width `w` just inside a rounded rectangle's edge. */
function roundedFrame(x0: number, y0: number, x1: number, y1: number, r: number, w: number): Shape {
  const sdf = roundedRectSdf(x0, y0, x1, y1, r);
  return {
    inside: (x, y) => {
      const d = sdf(x, y);
      return d <= 0 && d > -w;
    },
    box: [x0, y0, x1, y1],
  };
}

const circle = (cx: number, cy: number, r: number): Shape => ({
  inside: (x, y) => (x - cx) ** 2 + (y - cy) ** 2 <= r * r,
  box: [cx - r, cy - r, cx + r, cy + r],
});

const ring = (cx: number, cy: number, r: number, w: number): Shape => ({
  inside: (x, y) => {
    const d = Math.hypot(x - cx, y - cy);
    return d <= r && d > r - w;
  },
  box: [cx - r, cy - r, cx + r, cy + r],
});

const union = (...shapes: Shape[]): Shape => ({
  inside: (x, y) => shapes.some((s) => s.box[0] <= x && x <= s.box[2] && s.box[1] <= y && y <= s.box[3] && s.inside(x, y)),
  box: [
    Math.min(...shapes.map((s) => s.box[0])),
    Math.min(...shapes.map((s) => s.box[1])),
    Math.max(...shapes.map((s) => s.box[2])),
    Math.max(...shapes.map((s) => s.box[3])),
  ],
});

// ---------------------------------------------------------------------------------------------------------
// Colours

function hex(h: string, alpha = 1): RGBA {
  const n = Number.parseInt(h.replace('#', ''), 16);
  return [((n >> 16) & 255) / 255, ((n >> 8) & 255) / 255, (n & 255) / 255, alpha];
}

const mix = (a: RGBA, b: RGBA, t: number): RGBA => [
  a[0] + (b[0] - a[0]) * t,
  a[1] + (b[1] - a[1]) * t,
  a[2] + (b[2] - a[2]) * t,
  a[3] + (b[3] - a[3]) * t,
];

const smoothstep = (e0: number, e1: number, v: number): number => {
  const t = Math.min(Math.max((v - e0) / (e1 - e0), 0), 1);
  return t * t * (3 - 2 * t);
};

/** Tray colours: chosen to read on both light and dark task bars and panels. */
export const TRAY_COLOURS: Record<TrayState, string> = {
  idle: '#8a9099', // grey
  running: '#2f80ed', // blue
  approval: '#f2a516', // amber
  attention: '#e5484d', // red
};

// ---------------------------------------------------------------------------------------------------------
// The app icon: a dumbwaiter (a small lift in its shaft, a parcel on its shelf, hung from a pulley) on a
// rounded square. Proportions follow the macOS icon grid (an 824/1024 body with a soft shadow), which also
// reads well on Windows and Linux.

const BODY = { x0: 0.098, y0: 0.098, x1: 0.902, y1: 0.902, r: 0.181 };
const BG_TOP = hex('#2c6e9b');
const BG_BOTTOM = hex('#123552');
const CREAM = hex('#f6f1e4');
const PARCEL = hex('#f2a516');
const PARCEL_TAPE = hex('#c77d0a');

const background = (_x: number, y: number): RGBA => mix(BG_TOP, BG_BOTTOM, smoothstep(BODY.y0, BODY.y1, y));

function appIconLayers(size: number): Layer[] {
  if (size <= 32) return smallAppIconLayers(size);
  // Below 64 px the thin strokes of the full drawing blur into the background: thicken them.
  const bold = size < 64 ? 1.5 : 1;
  const stroke = 0.034 * bold;
  const cable = 0.011 * bold;
  const bodySdf = roundedRectSdf(BODY.x0, BODY.y0, BODY.x1, BODY.y1, BODY.r);
  const shadow = (x: number, y: number): RGBA => {
    const d = bodySdf(x, y - 0.014);
    return [0, 0, 0, 0.32 * (1 - smoothstep(-0.01, 0.035, d))];
  };
  const car = { x0: 0.35, y0: 0.43, x1: 0.65, y1: 0.71 };
  const inner = { x0: car.x0 + stroke, y0: car.y0 + stroke, x1: car.x1 - stroke, y1: car.y1 - stroke };
  const shelfY = (inner.y0 + inner.y1) / 2;
  const parcel = { x0: inner.x0 + 0.035, x1: inner.x0 + 0.155, y1: shelfY - stroke / 2 };
  return [
    { shape: region(BODY.x0 - 0.05, BODY.y0 - 0.05, BODY.x1 + 0.05, BODY.y1 + 0.07), paint: shadow },
    { shape: roundedRect(BODY.x0, BODY.y0, BODY.x1, BODY.y1, BODY.r), paint: background },
    // The shaft: a lintel and two rails, standing on a serving sill.
    { shape: rect(0.27, 0.2, 0.73, 0.2 + stroke * 1.2), paint: CREAM },
    { shape: rect(0.27, 0.2, 0.27 + stroke, 0.81), paint: CREAM },
    { shape: rect(0.73 - stroke, 0.2, 0.73, 0.81), paint: CREAM },
    { shape: roundedRect(0.2, 0.81, 0.8, 0.81 + stroke * 1.3, stroke * 0.4), paint: CREAM },
    // The pulley under the lintel and the two cables down to the car.
    { shape: circle(0.5, 0.285, 0.05), paint: CREAM },
    { shape: circle(0.5, 0.285, 0.018), paint: background },
    { shape: rect(0.45, 0.285, 0.45 + cable, car.y0), paint: CREAM },
    { shape: rect(0.55 - cable, 0.285, 0.55, car.y0), paint: CREAM },
    // The car: a frame with a shelf across the middle and a parcel on the shelf.
    { shape: roundedFrame(car.x0, car.y0, car.x1, car.y1, 0.022, stroke), paint: CREAM },
    { shape: rect(inner.x0, shelfY - stroke / 2, inner.x1, shelfY + stroke / 2), paint: CREAM },
    { shape: roundedRect(parcel.x0, parcel.y1 - 0.085, parcel.x1, parcel.y1, 0.008), paint: PARCEL },
    { shape: rect((parcel.x0 + parcel.x1) / 2 - 0.009 * bold, parcel.y1 - 0.085, (parcel.x0 + parcel.x1) / 2 + 0.009 * bold, parcel.y1), paint: PARCEL_TAPE },
  ];
}

/**
 * The app icon at 16 and 32 px (menus, task bars, the window's title bar): the same drawing reduced to what
 * survives at that size, on the 16 px pixel grid, filling the square (the macOS margins would waste a
 * quarter of the pixels; macOS itself never shows these sizes from this file).
 */
function smallAppIconLayers(size: number): Layer[] {
  const u = 1 / 16;
  const px = 1 / size;
  const tileBackground = (_x: number, y: number): RGBA => mix(BG_TOP, BG_BOTTOM, y);
  return [
    { shape: roundedRect(0, 0, 1, 1, 3.5 * u), paint: tileBackground },
    { shape: rect(3 * u, 2 * u, 13 * u, 3 * u), paint: CREAM }, // the beam
    { shape: rect(8 * u - px, 3 * u, 8 * u + px, 5 * u), paint: CREAM }, // the cable
    { shape: roundedFrame(3 * u, 5 * u, 13 * u, 14 * u, 0.5 * u, u), paint: CREAM }, // the car
    { shape: rect(4 * u, 9 * u, 12 * u, 10 * u), paint: CREAM }, // its shelf
    { shape: rect(5 * u, 7 * u, 8 * u, 9 * u), paint: PARCEL }, // the parcel
  ];
}

// ---------------------------------------------------------------------------------------------------------
// Tray icons: the lift car hanging from its beam, drawn on the pixel grid of the 16 px icon (at 32 px every
// edge still falls on a pixel boundary). What the car holds tells the state apart, in colour and in shape:
// its shelf (idle), a dot (running), a ring (waiting for approval), an exclamation mark (needs attention).

/** The tray glyph for `state` at `size` px (16 or 32); coordinates below are 16 px grid units. */
function trayGlyph(state: TrayState, size: number): Shape {
  const u = 1 / 16;
  // Strokes of 2 px at 1x and 3 px at 2x, about as heavy as the menu bar's own icons; the centred parts (the
  // cable, the exclamation mark) are an even number of pixels wide so that they stay sharp.
  const t = size <= 16 ? 2 * u : 1.5 * u;
  const thin = 2 / size;
  const car = { x0: 2 * u, y0: 4 * u, x1: 14 * u, y1: 16 * u };
  const inner = { x0: car.x0 + t, y0: car.y0 + t, x1: car.x1 - t, y1: car.y1 - t };
  const cx = (inner.x0 + inner.x1) / 2;
  const cy = (inner.y0 + inner.y1) / 2;
  const parts: Shape[] = [
    rect(2 * u, 0, 14 * u, t), // the beam
    rect(8 * u - thin / 2, 0, 8 * u + thin / 2, car.y0), // the cable
    roundedFrame(car.x0, car.y0, car.x1, car.y1, 1.5 * u, t), // the car
  ];
  switch (state) {
    case 'idle':
      parts.push(rect(inner.x0, cy - t / 2, inner.x1, cy + t / 2)); // its shelf
      break;
    case 'running':
      parts.push(circle(cx, cy, 2.5 * u));
      break;
    case 'approval':
      parts.push(ring(cx, cy, 3 * u, t * 0.75));
      break;
    case 'attention':
      parts.push(rect(cx - u, inner.y0 + u, cx + u, cy)); // the bar
      parts.push(rect(cx - u, inner.y1 - 3 * u, cx + u, inner.y1 - u)); // the point
      break;
  }
  return union(...parts);
}

function trayLayers(state: TrayState, template: boolean, size: number): Layer[] {
  return [{ shape: trayGlyph(state, size), paint: template ? hex('#000000') : hex(TRAY_COLOURS[state]) }];
}

// ---------------------------------------------------------------------------------------------------------
// Rasterising: each pixel is the average of samples × samples points, composited in premultiplied alpha.

export interface Image {
  width: number;
  height: number;
  /** Straight RGBA, 8 bits a channel, rows top to bottom. */
  data: Uint8Array;
}

function rasterise(allLayers: Layer[], size: number, samples: number): Image {
  const data = new Uint8Array(size * size * 4);
  const n = samples * samples;
  for (let py = 0; py < size; py++) {
    const top = py / size;
    const bottom = (py + 1) / size;
    const rowLayers = allLayers.filter(({ shape: { box } }) => box[1] <= bottom && box[3] >= top);
    for (let px = 0; px < size; px++) {
      const left = px / size;
      const right = (px + 1) / size;
      const layers = rowLayers.filter(({ shape: { box } }) => box[0] <= right && box[2] >= left);
      if (layers.length === 0) continue;
      let r = 0;
      let g = 0;
      let b = 0;
      let a = 0;
      for (let sy = 0; sy < samples; sy++) {
        const y = (py + (sy + 0.5) / samples) / size;
        for (let sx = 0; sx < samples; sx++) {
          const x = (px + (sx + 0.5) / samples) / size;
          // Premultiplied colour of this sample, painted bottom layer first.
          let cr = 0;
          let cg = 0;
          let cb = 0;
          let ca = 0;
          for (const layer of layers) {
            if (!layer.shape.inside(x, y)) continue;
            const p = typeof layer.paint === 'function' ? layer.paint(x, y) : layer.paint;
            const pa = p[3];
            cr = p[0] * pa + cr * (1 - pa);
            cg = p[1] * pa + cg * (1 - pa);
            cb = p[2] * pa + cb * (1 - pa);
            ca = pa + ca * (1 - pa);
          }
          r += cr;
          g += cg;
          b += cb;
          a += ca;
        }
      }
      const o = (py * size + px) * 4;
      const alpha = a / n;
      if (alpha > 0) {
        data[o] = Math.round(Math.min(r / a, 1) * 255);
        data[o + 1] = Math.round(Math.min(g / a, 1) * 255);
        data[o + 2] = Math.round(Math.min(b / a, 1) * 255);
        data[o + 3] = Math.round(alpha * 255);
      }
    }
  }
  return { width: size, height: size, data };
}

/** More samples where pixels are few: a 16 px icon needs finer edges than a 1024 px one. */
const samplesFor = (size: number): number => (size <= 64 ? 8 : size <= 256 ? 6 : 4);

export function renderAppIcon(size: number): Image {
  return rasterise(appIconLayers(size), size, samplesFor(size));
}

export function renderTrayIcon(state: TrayState, template: boolean, size: number): Image {
  return rasterise(trayLayers(state, template, size), size, samplesFor(size));
}

// ---------------------------------------------------------------------------------------------------------
// PNG: signature, IHDR (8-bit RGBA), one IDAT (rows with the adaptive filter choice PNG encoders use:
// the filter whose output has the smallest sum of absolute values), IEND.

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 255]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, body: Uint8Array): Buffer {
  const out = Buffer.alloc(12 + body.length);
  out.writeUInt32BE(body.length, 0);
  out.write(type, 4, 'latin1');
  Buffer.from(body.buffer, body.byteOffset, body.byteLength).copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + body.length)), 8 + body.length);
  return out;
}

const paeth = (a: number, b: number, c: number): number => {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
};

export function encodePng(image: Image): Buffer {
  const { width, height, data } = image;
  const stride = width * 4;
  const raw = Buffer.alloc((stride + 1) * height);
  const candidate = new Uint8Array(stride);
  for (let y = 0; y < height; y++) {
    const row = y * stride;
    const prev = y > 0 ? row - stride : -1;
    let bestScore = Infinity;
    for (let filter = 0; filter <= 4; filter++) {
      let score = 0;
      for (let i = 0; i < stride; i++) {
        const x = data[row + i]!;
        const a = i >= 4 ? data[row + i - 4]! : 0;
        const b = prev >= 0 ? data[prev + i]! : 0;
        const c = prev >= 0 && i >= 4 ? data[prev + i - 4]! : 0;
        const predicted = filter === 0 ? 0 : filter === 1 ? a : filter === 2 ? b : filter === 3 ? (a + b) >> 1 : paeth(a, b, c);
        const v = (x - predicted) & 255;
        candidate[i] = v;
        score += v < 128 ? v : 256 - v;
      }
      if (score < bestScore) {
        bestScore = score;
        const at = y * (stride + 1);
        raw[at] = filter;
        raw.set(candidate, at + 1);
      }
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // colour type: RGBA
  ihdr[10] = 0; // compression: deflate
  ihdr[11] = 0; // filter method: adaptive
  ihdr[12] = 0; // no interlace
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw, { level: 9 })), chunk('IEND', new Uint8Array(0))]);
}

// ---------------------------------------------------------------------------------------------------------
// The files

/** Every file generateIcons writes, relative to its output folder, with what goes in it. */
export function iconManifest(): { file: string; size: number; render: () => Image }[] {
  const app = (file: string, size: number) => ({ file, size, render: () => renderAppIcon(size) });
  const files = [app('icon.png', 1024), app('512x512.png', 512), app('256x256.png', 256)];
  for (const size of LINUX_SIZES) files.push(app(path.join('linux', `${size}x${size}.png`), size));
  for (const state of TRAY_STATES) {
    for (const template of [false, true]) {
      for (const [suffix, size] of [['', 16], ['@2x', 32]] as const) {
        const file = path.join('tray', `${state}${template ? 'Template' : ''}${suffix}.png`);
        files.push({ file, size, render: () => renderTrayIcon(state, template, size) });
      }
    }
  }
  return files;
}

/** Writes every icon into outDir (creating folders as needed); returns the paths written. */
export function generateIcons(outDir: string): string[] {
  const written: string[] = [];
  for (const { file, render } of iconManifest()) {
    const target = path.join(outDir, file);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, encodePng(render()));
    written.push(target);
  }
  return written;
}

const isScript = process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isScript) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const outDir = path.resolve(process.argv[2] ?? path.join(root, 'build', 'icons'));
  const written = generateIcons(outDir);
  console.log(`wrote ${written.length} icons to ${outDir}`);
}
