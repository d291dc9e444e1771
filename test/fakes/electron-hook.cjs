// Preloaded with `node --require` into the process that runs the app's built main bundle: makes
// `require('electron')` (and only that request) load the stand-in in ./electron.cjs. Everything else
// resolves as usual, so the bundle runs exactly as built.
/* global require, __dirname */
/* eslint-disable @typescript-eslint/no-require-imports -- plain CommonJS: node --require loads it as it is */
'use strict';
const Module = require('node:module');
const path = require('node:path');

const STAND_IN = path.join(__dirname, 'electron.cjs');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  return request === 'electron' ? STAND_IN : resolve.call(this, request, ...rest);
};
