/** A count and its noun, in the plural unless the count is one: `1 row`, `2 rows`, `0 bad rows`. */
export function counted(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
