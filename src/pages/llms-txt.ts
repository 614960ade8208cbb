import { sendWhole } from '../http/send-json.js';
import { docsMarkdown } from './docs-markdown.js';
import { renderDocs } from './docs-page.js';
import type { PageCall } from './page-services.js';

/** `GET /docs.md`: the `/docs` page as Markdown; needs no key. */
export function handleDocsMarkdown({ req, res, services }: PageCall): Promise<void> {
  return sendText(req, res, 'text/markdown; charset=utf-8', docsMarkdown(renderDocs(services)));
}

/**
 * `GET /llms.txt` (llmstxt.org): the service's name and summary, as the `/docs` page has them, and
 * links to the reference as Markdown, the OpenAPI document, the GraphQL schema and the MCP endpoint;
 * needs no key.
 */
export function handleLlmsText({ req, res, services }: PageCall): Promise<void> {
  return sendText(req, res, 'text/plain; charset=utf-8', llmsText(docsMarkdown(renderDocs(services))));
}

/** llms.txt made from the docs as Markdown: its title, its first paragraph as the summary, its sections listed. */
export function llmsText(markdown: string): string {
  const [title, summary] = markdown.split('\n\n');
  const sections = [...markdown.matchAll(/^## (.+)$/gm)].map((m) => m[1]).join(', ');
  return `${title}

> ${summary}

Every API request needs a key in the \`x-api-key\` header; \`/mcp\` also takes it as \`Authorization: Bearer <key>\`.
Numbers from \`/mcp\`'s \`get_series\` come with a citation: the REST path and GraphQL query that give them again,
pinned with \`as_of\`, and the SHA-256 of the REST answer.

## Docs

- [API reference](/docs.md): the /docs page as Markdown: ${sections}

## APIs

- [OpenAPI 3.1](/v1/openapi.json): the REST contract, \`/v1\` (needs the key)
- [GraphQL schema](/schema.graphql): the SDL of \`/graphql\` (needs the key)
- [MCP](/mcp): Model Context Protocol over Streamable HTTP, stateless (POST): tools list_metrics, explain_metric, get_series, total, rank, formula

## Optional

- [Docs page](/docs): the same reference as HTML
- [Explorer](/explore): charts of any series in a browser
`;
}

// Private

function sendText(req: PageCall['req'], res: PageCall['res'], type: string, text: string): Promise<void> {
  const headers = [
    ['content-type', type],
    ['cache-control', 'public, max-age=300'],
  ] as const;
  return sendWhole(req, res, { headers, body: Buffer.from(text), compress: true });
}
