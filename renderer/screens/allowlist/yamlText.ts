// How the editor parses and prints allowlist YAML: the same options everywhere, so what is compared
// (the text as read, as edited, as merged) is compared alike.
import { parseDocument, type Document } from 'yaml';

export function parse(src: string): Document.Parsed {
  return parseDocument(src, { uniqueKeys: true, prettyErrors: false, keepSourceTokens: false });
}

export function lineAt(src: string, offset: number): number {
  let n = 1;
  for (let i = 0; i < offset && i < src.length; i++) if (src.charCodeAt(i) === 10) n++;
  return n;
}

export const STRINGIFY = { lineWidth: 0, flowCollectionPadding: false } as const;

export function loadDoc(src: string): Document.Parsed {
  const doc = parse(src);
  if (doc.errors.length > 0) throw new Error(`the YAML has syntax errors (line ${lineAt(src, doc.errors[0]!.pos[0])}): fix them in the YAML view first`);
  return doc;
}
