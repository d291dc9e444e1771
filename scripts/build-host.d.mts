// Types of build-host.mjs (plain JavaScript so that bin/dumbwaiter.js can run it without tsx).
import type { Plugin } from 'esbuild';

export const ROOT: string;
export const INPUTS_FILE: string;
export const faultsOff: Plugin;
export function buildSandboxClients(distDir?: string): Promise<string[]>;
export function buildHost(options?: { faults?: boolean; distDir?: string }): Promise<string>;
export function asciiOnly(file: string): void;
