/** The query GraphiQL opens with: it runs as is and shows every kind of field. */
export const EXAMPLE_QUERY = `# Daily values of two chains' token prices for a month.
# Add your key in the Headers tab below, then press the run button.
query TokenPrices {
  metric(name: token_price_usd, projects: [ethereum, solana], from: "2025-01-01", to: "2025-01-31") {
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
