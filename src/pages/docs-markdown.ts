/**
 * The `/docs` page as Markdown, converted from its HTML (docs-page.ts), so the two cannot
 * say different things. The page uses a small set of tags, each with one Markdown form; a
 * tag outside that set throws, so a page edit that brings a new one is caught by the tests
 * rather than served half-converted.
 */
export function docsMarkdown(html: string): string {
  const body = html.slice(html.indexOf('<body>') + '<body>'.length, html.lastIndexOf('</body>'));
  const out: string[] = [];
  let line = '';
  let inCode = false;
  let link: string | undefined;
  const flush = (after: string) => {
    const text = line.replace(/\s+/g, ' ').trim();
    if (text !== '') out.push(text, after);
    line = '';
  };
  for (const [, text, tag] of body.matchAll(/([^<]*)(<[^>]*>|$)/g)) {
    line += inCode ? decode(text!) : escapeText(decode(text!));
    if (tag === '' || tag === undefined) continue;
    const [, closing, name, attributes] = /^<(\/?)([a-z0-9]+)([^>]*)>$/.exec(tag) ?? [];
    switch (`${closing}${name}`) {
      case 'h1':
        line = '# ';
        break;
      case 'h2':
        line = '## ';
        break;
      case 'li':
        line = '- ';
        break;
      case '/h1':
      case '/h2':
      case '/p':
        flush('\n\n');
        break;
      case '/li':
        flush('\n');
        break;
      case 'ul':
      case 'p':
        flush('\n\n');
        break;
      case '/ul':
        flush('\n');
        out.push('\n');
        break;
      case 'code':
      case '/code':
        inCode = closing === '';
        line += '`';
        break;
      case 'b':
      case '/b':
        line += '**';
        break;
      case 'em':
      case '/em':
        line += '*';
        break;
      case 'br':
        line += ' — ';
        break;
      case 'small':
      case '/small':
        break;
      case 'a':
        link = /href="([^"]*)"/.exec(attributes ?? '')?.[1];
        line += '[';
        break;
      case '/a':
        line += `](${link ?? ''})`;
        break;
      default:
        throw new Error(`the docs page holds a tag Markdown has no form for here: ${tag}`);
    }
  }
  flush('\n');
  return `${out
    .join('')
    .replace(/\n{3,}/g, '\n\n')
    .trim()}\n`;
}

// Private

const ENTITIES: Record<string, string> = { '&lt;': '<', '&gt;': '>', '&amp;': '&', '&quot;': '"' };

function decode(text: string): string {
  return text.replace(/&(?:lt|gt|amp|quot);/g, (entity) => ENTITIES[entity]!);
}

/** Plain text as Markdown shows it literally: its emphasis, link and HTML characters escaped. */
function escapeText(text: string): string {
  return text.replace(/[\\*_[\]<`]/g, (c) => `\\${c}`);
}
