// The app's one confirmation dialog (a native modal <dialog>: focus is trapped and Escape cancels).
import { useEffect, useRef } from 'react';
import { answerConfirm, usePendingConfirm } from '../stores/confirm';

export function ConfirmDialog() {
  const pending = usePendingConfirm();
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (pending && !d.open) d.showModal();
    if (!pending && d.open) d.close();
  }, [pending]);
  return (
    <dialog ref={ref} className="dialog" aria-labelledby="confirm-title" onCancel={() => answerConfirm(false)}>
      {pending ? (
        <form method="dialog" onSubmit={(e) => (e.preventDefault(), answerConfirm(true))}>
          <h2 id="confirm-title">{pending.title}</h2>
          <p>{pending.body}</p>
          <div className="dialog-actions">
            {/* A dangerous step starts on Cancel: a stray Enter must not confirm it. */}
            <button type="button" onClick={() => answerConfirm(false)} autoFocus={pending.danger}>
              Cancel
            </button>
            <button type="submit" className={pending.danger ? 'danger-solid' : 'primary'} autoFocus={!pending.danger}>
              {pending.confirmLabel}
            </button>
          </div>
        </form>
      ) : null}
    </dialog>
  );
}
