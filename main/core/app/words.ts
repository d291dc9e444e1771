// Small helpers for the words the tray and the notifications show.

export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** At most `max` characters, the cut marked with an ellipsis. */
export const ellipsis = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

export const capitalized = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
