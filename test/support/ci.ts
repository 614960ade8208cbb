/**
 * True under CI: the CI variable set to anything but '', '0' or 'false' (GitHub Actions
 * and most runners say 'true', others '1'). There a missing prerequisite fails the run
 * instead of skipping suites that CI could not be seen to skip.
 */
export const UNDER_CI = !['', '0', 'false'].includes((process.env.CI ?? '').trim().toLowerCase());

/**
 * For a suite that needs `what`: under CI, throws when it is missing; elsewhere, says once
 * that the suite is skipped and how to run it. Returns whether the suite can run.
 */
export function prerequisite(available: boolean, what: string, howToGetIt: string): boolean {
  if (available) return true;
  if (UNDER_CI) throw new Error(`${what} is missing under CI, where no suite may be skipped; ${howToGetIt}`);
  console.warn(`\n[metrics-service] ${what} is missing: suites that need it are SKIPPED. ${howToGetIt}\n`);
  return false;
}
