// The allowlist editor's state: the text being edited (the one source of truth: the form and the YAML
// view both write it), the file as it was read (text and hash: saving with a stale hash is refused),
// the validator's verdict, the selected operation and its form draft, and an outside edit noticed.
// Kept across screen changes, so unsaved edits survive a look at another screen.
import { create } from 'zustand';
import type { AllowlistCheck } from '../../../shared/ipc/views';
import { api, errorText } from '../../api';
import { toast } from '../../stores/toasts';
import { addOperation, applyOperation, deleteOperation, freshName } from './edits';
import { emptyOp, settled, type OpForm } from './form';
import { mergeEdits } from './merge';
import { readOperations } from './readForm';

export interface DiskVersion {
  text: string;
  hash: string;
}

interface EditorState {
  loaded: boolean;
  loadError: string | null;
  path: string;
  /** The file as last read or saved. */
  baseText: string;
  baseHash: string;
  /** What the editor holds (what Save writes). */
  text: string;
  /** The validator's verdict and the text it is about. */
  check: AllowlistCheck | null;
  checkedText: string | null;
  selected: number | null;
  /**
   * The selected operation's form as typed (`form`), the text it produced or was read from, and the
   * form that text holds (`applied`: the previous form the next edit is compared with, field by field).
   * They differ only while the form cannot be written (two arguments with one name).
   */
  draft: { text: string; index: number; form: OpForm | null; applied: OpForm | null } | null;
  /**
   * Which operation the form is about: a new number whenever another one is selected, added, deleted
   * or read afresh (not when the form renames it), so per-operation UI state never carries over.
   */
  opSerial: number;
  /** The file changed on disk while there were unsaved edits (or a save was refused for it). */
  outside: (DiskVersion & { refusedSave: boolean }) | null;
  saving: boolean;
  /** Why the form cannot be used (syntax errors, or an edit the form could not make). */
  editError: string | null;
}

const useEditor = create<EditorState>(() => ({
  loaded: false,
  loadError: null,
  path: '',
  baseText: '',
  baseHash: '',
  text: '',
  check: null,
  checkedText: null,
  selected: null,
  draft: null,
  opSerial: 0,
  outside: null,
  saving: false,
  editError: null,
}));

const get = () => useEditor.getState();
const set = (p: Partial<EditorState>) => useEditor.setState(p);

// ---------------------------------------------------------------- selectors

export const useIsLoaded = () => useEditor((s) => s.loaded);
export const useLoadError = () => useEditor((s) => s.loadError);
export const usePath = () => useEditor((s) => s.path);
export const useText = () => useEditor((s) => s.text);
export const useDirty = () => useEditor((s) => s.loaded && s.text !== s.baseText);
export const useCheck = () => useEditor((s) => (s.checkedText === s.text ? s.check : null));
export const useLastCheck = () => useEditor((s) => s.check);
export const useSelected = () => useEditor((s) => s.selected);
export const useOutside = () => useEditor((s) => s.outside);
export const useSaving = () => useEditor((s) => s.saving);
export const useEditError = () => useEditor((s) => s.editError);
export const useOpSerial = () => useEditor((s) => s.opSerial);

/** The selected operation's form: the draft as typed, or read afresh when the text changed elsewhere. */
export function useForm(): OpForm | null {
  return useEditor((s) => (s.draft && s.draft.text === s.text && s.draft.index === s.selected ? s.draft.form : null));
}

// ---------------------------------------------------------------- actions

/** Makes sure the draft matches the text and selection (call after anything changes either). */
function refreshDraft(): void {
  const s = get();
  if (s.selected === null) return set({ draft: null, opSerial: s.opSerial + 1 });
  if (s.draft && s.draft.text === s.text && s.draft.index === s.selected) return;
  const r = readOperations(s.text);
  if (r.syntaxErrors.length > 0) {
    return set({ draft: { text: s.text, index: s.selected, form: null, applied: null }, editError: `The YAML has a syntax error on line ${r.syntaxErrors[0]!.line}: ${r.syntaxErrors[0]!.message}. Fix it in the YAML view.` });
  }
  const form = r.ops[s.selected] ?? null;
  // Another operation now (or one renamed in the YAML view): its try-out starts afresh.
  const was = s.draft?.index === s.selected ? (s.draft.applied ?? s.draft.form) : null;
  set({
    draft: { text: s.text, index: s.selected, form, applied: form },
    editError: form ? null : s.selected < r.ops.length ? `Operation ${s.selected + 1} is not a mapping: fix it in the YAML view.` : null,
    ...(was && form && was.name === form.name ? {} : { opSerial: s.opSerial + 1 }),
  });
}

/** Another operation is about to be shown at the selected place (added, deleted, reloaded). */
function newOperation(): void {
  set({ opSerial: get().opSerial + 1 });
}

function adopt(view: { path: string; text: string; hash: string; check: AllowlistCheck }): void {
  const ops = readOperations(view.text).ops;
  const sel = get().selected;
  set({
    loaded: true,
    loadError: null,
    path: view.path,
    baseText: view.text,
    baseHash: view.hash,
    text: view.text,
    check: view.check,
    checkedText: view.text,
    outside: null,
    selected: sel !== null && sel < ops.length ? sel : ops.length > 0 ? 0 : null,
    draft: null,
  });
  newOperation();
  refreshDraft();
}

/** Loads the file (keeping unsaved edits made before leaving the screen). */
export async function loadEditor(): Promise<void> {
  if (get().loaded && get().text !== get().baseText) return;
  try {
    adopt(await api.allowlist.read());
  } catch (e) {
    set({ loadError: errorText(e) });
  }
}

export function select(index: number | null): void {
  set({ selected: index });
  refreshDraft();
}

/** The YAML view's edit: the text itself. */
export function setText(text: string): void {
  set({ text });
  refreshDraft();
}

/**
 * The form's edit of the selected operation: only the fields that differ from the form before the
 * edit are written. When the form cannot be written yet (two arguments with one name), what was typed
 * is kept in the form and the text keeps its last good version until the clash is resolved.
 */
export function editForm(form: OpForm): void {
  const s = get();
  if (s.selected === null) return;
  const draft = s.draft && s.draft.text === s.text && s.draft.index === s.selected ? s.draft : null;
  try {
    const text = applyOperation(s.text, s.selected, form, draft?.applied ?? undefined);
    const now = settled(form);
    set({ text, draft: { text, index: s.selected, form: now, applied: now }, editError: null });
  } catch (e) {
    set({ editError: errorText(e), ...(draft ? { draft: { ...draft, form } } : {}) });
  }
}

export function addOp(): void {
  try {
    const { text, index } = addOperation(get().text, { ...emptyOp(freshName(get().text)), command: [''], scope: 'read', approval: 'always' });
    set({ text, selected: index });
    newOperation();
    refreshDraft();
  } catch (e) {
    toast(errorText(e), 'error');
  }
}

export function deleteOp(index: number): void {
  try {
    const text = deleteOperation(get().text, index);
    const n = readOperations(text).ops.length;
    set({ text, selected: n === 0 ? null : Math.min(index, n - 1) });
    newOperation();
    refreshDraft();
  } catch (e) {
    toast(errorText(e), 'error');
  }
}

export function setCheck(text: string, check: AllowlistCheck): void {
  set({ check, checkedText: text });
}

/** Save, as Ctrl+S asks for it: says why not when it cannot. */
export function requestSave(): void {
  const s = get();
  if (!s.loaded || s.saving) return;
  if (s.text === s.baseText && !s.outside) return toast('No unsaved changes');
  if (s.checkedText === s.text && s.check && !s.check.ok) return toast('Not saved: fix the problems listed first', 'error');
  void save();
}

export function revert(): void {
  setText(get().baseText);
}

export async function save(): Promise<void> {
  const s = get();
  if (s.saving || !s.loaded) return;
  set({ saving: true });
  try {
    const text = s.text;
    const r = await api.allowlist.save({ text, baseHash: s.baseHash });
    if (r.saved) {
      set({ baseText: text, baseHash: r.hash, outside: null });
      toast('Allowlist saved: the host uses it within a second');
    } else if (r.reason === 'cancelled') {
      toast('Not saved: cancelled in the confirmation dialog');
    } else if (r.reason === 'invalid') {
      setCheck(text, r.check);
      toast(`Not saved: the allowlist has ${r.check.problems.length === 1 ? 'a problem' : `${r.check.problems.length} problems`}`, 'error');
    } else {
      const disk = await api.allowlist.read();
      set({ outside: { text: disk.text, hash: disk.hash, refusedSave: true } });
      toast('Not saved: allowlist.yaml changed on disk since you opened it', 'error');
    }
  } catch (e) {
    toast(errorText(e), 'error');
  } finally {
    set({ saving: false });
  }
}

/** Discards the edits and takes the file as it is on disk now. */
export async function reloadFromDisk(): Promise<void> {
  try {
    adopt(await api.allowlist.read());
    toast('Reloaded allowlist.yaml from disk');
  } catch (e) {
    toast(errorText(e), 'error');
  }
}

/**
 * Keeps the edits, having seen the version on disk: the next Save replaces that version (the one
 * shown, and no other: a further outside change is noticed again).
 */
export function keepMine(): void {
  const o = get().outside;
  if (!o) return;
  set({ baseText: o.text, baseHash: o.hash, outside: null });
}

/**
 * Applies the unsaved changes (operation by operation) to the version on disk instead: the result is
 * left unsaved for review. Refused when an operation changed on both sides.
 */
export function mergeIntoDisk(): void {
  const s = get();
  const o = s.outside;
  if (!o) return;
  try {
    const r = mergeEdits(s.baseText, s.text, o.text);
    if (r.conflicts.length > 0) {
      toast(`Cannot merge: ${r.conflicts.join(', ')} changed both here and on disk. Compare the two versions and edit by hand.`, 'error');
      return;
    }
    set({ baseText: o.text, baseHash: o.hash, outside: null, text: r.text });
    refreshDraft();
    toast('Your changes are applied to the version on disk: review them, then save');
  } catch (e) {
    toast(errorText(e), 'error');
  }
}

/** Notices an outside edit: reloads quietly when nothing is unsaved, else says so. */
export async function pollDisk(): Promise<void> {
  const s = get();
  if (!s.loaded || s.saving) return;
  let disk;
  try {
    disk = await api.allowlist.read();
  } catch {
    return; // the status feed reports an unreachable host
  }
  const now = get();
  if (now.saving || disk.hash === now.baseHash || disk.hash === now.outside?.hash) return;
  if (now.text === now.baseText) {
    adopt(disk);
    toast('allowlist.yaml changed on disk: reloaded');
  } else {
    set({ outside: { text: disk.text, hash: disk.hash, refusedSave: false } });
  }
}
