// A select's option for a value the file holds that the select does not offer.
/**
 * The file's value when the select does not offer it (a typo like "raed"): shown as invalid and kept
 * as it is until another value is picked; never silently turned into a default.
 */
export function InvalidOption({ value, known }: { value: string; known: readonly string[] }) {
  if (value === '' || known.includes(value)) return null;
  return <option value={value}>(invalid: {value})</option>;
}
