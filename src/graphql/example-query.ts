import type { GraphqlServices } from './graphql-services.js';

/**
 * The query GraphiQL opens with: it runs as is and shows every kind of field. Its range is
 * the last stored month (read at start-up), so it shows data whatever today's date is.
 */
export function exampleQuery(range: GraphqlServices['state']['example']): string {
  const bounds = range === undefined ? '' : `, from: "${range.from}", to: "${range.to}"`;
  return `# Daily values of two chains' token prices over the last stored month.
# Type your key into the Headers tab below ({"x-api-key": "…"}), then press the run button.
query TokenPrices {
  metric(name: token_price_usd, projects: [ethereum, solana]${bounds}) {
    name
    valueKind
    series {
      project
      slug
      firstDate
      lastDate
      points {
        date
        value
      }
    }
  }
}
`;
}
