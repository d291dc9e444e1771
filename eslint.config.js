// Lint rules. The one that matters most: the core (everything in main/ but main/electron/) and shared/
// never import Electron, so that the headless daemon, the CLI and the tests run under plain Node. And in
// the Electron layer, the raw IPC objects stay in main/electron/ipc.ts (and preload/): every channel is
// the contract's, bound and checked in one place.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';

// The one writer of a request's state (main/core/ledger/requestStates.ts) is the lifecycle's alone: it
// builds it and hands it to no one, so that every state change passes its table of transitions and
// records its audit entries and result files. Every other module, test and benchmark reads requests
// through ledger/requests.ts and changes their state through the lifecycle.
const STATE_WRITER = {
  group: ['**/requestStates', '**/requestStates.*'],
  message: "Only main/core/lifecycle.ts writes a request's state: change it through the Lifecycle (enter, move, start, refuse), read it through ledger/requests.ts.",
};

// And its dynamic forms, which no-restricted-imports does not see.
const STATE_WRITER_LOADS = [
  { selector: 'ImportExpression[source.value=/requestStates/]', message: STATE_WRITER.message },
  { selector: "CallExpression[callee.name='require'][arguments.0.value=/requestStates/]", message: STATE_WRITER.message },
];

const ELECTRON_FREE_MESSAGE = 'The core runs under plain Node: only main/electron/ and preload/ may import Electron.';
const electronFree = (patterns = [STATE_WRITER]) => ({
  'no-restricted-imports': [
    'error',
    {
      paths: [{ name: 'electron', message: ELECTRON_FREE_MESSAGE }],
      patterns: [{ group: ['electron/*'], message: ELECTRON_FREE_MESSAGE }, ...patterns],
    },
  ],
});

const RAW_IPC = ['ipcMain', 'ipcRenderer'];
const RAW_IPC_MESSAGE = 'Raw IPC stays in main/electron/ipc.ts and preload/: register and send through them (the contract, shared/ipc).';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'out/', 'test/artifacts/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', setImmediate: 'readonly', TextDecoder: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-empty': ['error', { allowEmptyCatch: true }],
    },
  },
  { rules: { 'no-restricted-imports': ['error', { patterns: [STATE_WRITER] }], 'no-restricted-syntax': ['error', ...STATE_WRITER_LOADS] } },
  { files: ['main/**', 'shared/**', 'renderer/**', 'bin/**', 'test/**'], ignores: ['main/electron/**'], rules: electronFree() },
  { files: ['main/core/lifecycle.ts'], rules: { ...electronFree([]), 'no-restricted-syntax': 'off' } },
  // shared/ is below main/: the sandbox clients and the renderer use it, so it must not pull in the host.
  {
    files: ['shared/**'],
    rules: electronFree([STATE_WRITER, { group: ['**/main/**', '../main', '../../main'], message: 'shared/ is used by the sandbox clients and the renderer: it may not import the host (main/).' }]),
  },
  {
    files: ['main/electron/**'],
    ignores: ['main/electron/ipc.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: [{ name: 'electron', importNames: RAW_IPC, message: RAW_IPC_MESSAGE }], patterns: [STATE_WRITER] }],
      'no-restricted-syntax': ['error', ...RAW_IPC.map((name) => ({ selector: `MemberExpression[property.name='${name}']`, message: RAW_IPC_MESSAGE })), ...STATE_WRITER_LOADS],
    },
  },
  {
    files: ['renderer/**'],
    languageOptions: { globals: { window: 'readonly', document: 'readonly', location: 'readonly', navigator: 'readonly' } },
    plugins: { 'react-hooks': reactHooks },
    rules: {
      'react-hooks/rules-of-hooks': 'error',
      'react-hooks/exhaustive-deps': 'error',
      // The renderer is a web page: it reaches the host only through the preload's API.
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'electron', message: 'The renderer talks to the host only through window.dumbwaiter.' }],
          patterns: [
            { group: ['node:*', 'fs', 'path', 'child_process'], message: 'The renderer is a sandboxed web page: no Node modules.' },
            { group: ['**/main/**', '../main', '../../main'], message: 'The renderer reaches the host only through the preload API (shared/ipc).' },
            STATE_WRITER,
          ],
        },
      ],
    },
  },
);
