/** The longest wait between two attempts of a delivery. */
export const MAX_RETRY_SECONDS = 3600;

/**
 * The wait before attempt `attempt + 1` after `attempt` failed: `baseSeconds` doubled per
 * failure (1st: base, 2nd: 2 × base, …) up to an hour, then ±25 % at random so receivers
 * that come back are not met by every sender at once.
 */
export function retryDelaySeconds(baseSeconds: number, attempt: number, random: () => number = Math.random): number {
  const plain = Math.min(MAX_RETRY_SECONDS, baseSeconds * 2 ** Math.min(attempt - 1, 30));
  return plain * (0.75 + random() * 0.5);
}
