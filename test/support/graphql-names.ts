/** A catalog name (metric or project slug) as a GraphQL enum value: hyphens become underscores. */
export const enumName = (slug: string): string => slug.replaceAll('-', '_');
