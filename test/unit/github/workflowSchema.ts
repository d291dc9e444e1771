// GitHub's own workflow parser (@actions/workflow-parser, the one behind the Actions service and the
// VS Code extension): a workflow's schema errors, as GitHub would report them when the run starts.
import { register } from 'node:module';
import type * as WorkflowParser from '@actions/workflow-parser';

// The package imports its schema (workflow-v1.0.min.json) without `with { type: 'json' }`: bundlers accept
// that, Node does not, and Vitest leaves node_modules to Node. This hook adds the attribute to that
// package's JSON imports only, in this test's worker.
const ADD_JSON_ATTRIBUTE = `export async function load(url, context, next) {
  const fix = url.includes('/@actions/workflow-parser/') && url.endsWith('.json') && !context.importAttributes?.type;
  return next(url, fix ? { ...context, importAttributes: { ...context.importAttributes, type: 'json' } } : context);
}`;

let parser: Promise<typeof WorkflowParser> | null = null;

function loadParser(): Promise<typeof WorkflowParser> {
  if (!parser) {
    register(`data:text/javascript,${encodeURIComponent(ADD_JSON_ATTRIBUTE)}`);
    parser = import('@actions/workflow-parser');
  }
  return parser;
}

/** Every error GitHub's parser finds in `content`: the schema (keys, types, which contexts an expression
 *  may use where), then the conversion into a workflow (job ids, `needs`, matrices, step ids...). */
export async function workflowErrors(content: string, name = 'ci.yml'): Promise<string[]> {
  const { parseWorkflow, convertWorkflowTemplate, NoOperationTraceWriter } = await loadParser();
  const parsed = parseWorkflow({ name, content }, new NoOperationTraceWriter());
  const converted = parsed.value ? await convertWorkflowTemplate(parsed.context, parsed.value) : undefined;
  const errors = parsed.context.errors.getErrors().map((e) => e.message);
  if (!parsed.value) errors.push(`${name}: no workflow could be read`);
  for (const e of converted?.errors ?? []) if (!errors.includes(e.Message)) errors.push(e.Message);
  return errors;
}
