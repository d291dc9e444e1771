// Lint rules. The one that matters most: the core (everything in main/ but main/electron/) and shared/
// never import Electron, so that the headless daemon, the CLI and the tests run under plain Node. And in
// the Electron layer, the raw IPC objects stay in main/electron/ipc.ts (and preload/): every channel is
// the contract's, bound and checked in one place.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';

const electronFree = {
  'no-restricted-imports': [
    'error',
    {
      paths: [{ name: 'electron', message: 'The core runs under plain Node: only main/electron/ and preload/ may import Electron.' }],
      patterns: [{ group: ['electron/*'], message: 'The core runs under plain Node: only main/electron/ and preload/ may import Electron.' }],
    },
  ],
};

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
  { files: ['main/**', 'shared/**', 'renderer/**', 'bin/**', 'test/**'], ignores: ['main/electron/**'], rules: electronFree },
  {
    files: ['main/electron/**'],
    ignores: ['main/electron/ipc.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: [{ name: 'electron', importNames: RAW_IPC, message: RAW_IPC_MESSAGE }] }],
      'no-restricted-syntax': ['error', ...RAW_IPC.map((name) => ({ selector: `MemberExpression[property.name='${name}']`, message: RAW_IPC_MESSAGE }))],
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
          ],
        },
      ],
    },
  },
);
