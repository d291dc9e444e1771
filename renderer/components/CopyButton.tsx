// Copies a text and says so.
import { copyText } from '../lib/clipboard';
import { toast } from '../stores/toasts';

export function CopyButton({ text, label = 'Copy', what = 'Text', onCopied }: { text: string; label?: string; what?: string; onCopied?: () => void }) {
  return (
    <button
      type="button"
      onClick={() =>
        copyText(text).then(
          () => {
            toast(`${what} copied`);
            onCopied?.();
          },
          (e: Error) => toast(`Could not copy: ${e.message}`, 'error'),
        )
      }
    >
      {label}
    </button>
  );
}
