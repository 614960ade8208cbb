/**
 * A count and its noun, in the plural unless the count is one: `1 row`, `2 rows`, `0 bad rows`;
 * `plural` for a noun without an s (`entries`).
 */
export function counted(count: number, noun: string, plural = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : plural}`;
}
