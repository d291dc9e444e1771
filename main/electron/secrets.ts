// Key secrets at rest, sealed with the OS keychain through safeStorage where there is a real backend.
// On Linux without a keyring safeStorage falls back to a hard-coded password ("basic_text"): that is
// no protection, so secrets stay as they are (in the 0600 ledger) and the app shows a warning.
import { safeStorage } from 'electron';
import type { SecretSealer } from '../core/keys/keyStore';

export interface SealerChoice {
  sealer: SecretSealer | null;
  warning: string | null;
}

export function chooseSealer(): SealerChoice {
  const weak = process.platform === 'linux' && safeStorage.getSelectedStorageBackend() === 'basic_text';
  if (!safeStorage.isEncryptionAvailable() || weak) {
    return {
      sealer: null,
      warning:
        'No OS keychain is available (on Linux: no GNOME Keyring or KWallet), so key secrets are protected by file permissions only.',
    };
  }
  return {
    sealer: {
      format: 'safestorage',
      seal: (secret) => safeStorage.encryptString(secret).toString('base64'),
      open: (sealed) => safeStorage.decryptString(Buffer.from(sealed, 'base64')),
    },
    warning: null,
  };
}
