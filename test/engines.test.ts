import semver from 'semver';
import { describe, expect, it } from 'vitest';
import lock from '../package-lock.json' with { type: 'json' };
import pkg from '../package.json' with { type: 'json' };

type Locked = { engines?: { node?: string } | string[] };

/** Every locked package (the root excluded) with the Node range it declares, if any. */
const lockedRanges = (): { name: string; range: string }[] =>
  Object.entries(lock.packages as Record<string, Locked>)
    .filter(([path]) => path !== '')
    .flatMap(([path, p]) => {
      const range = Array.isArray(p.engines) ? undefined : p.engines?.node;
      return range === undefined ? [] : [{ name: path.replace(/^.*node_modules\//, ''), range }];
    });

/** The locked packages whose range does not hold every Node version `declared` admits. */
const unsupportedBy = (declared: string) => lockedRanges().filter(({ range }) => !semver.subset(declared, range));

describe('engines', () => {
  it('declares only Node versions that every locked package accepts', () => {
    expect(semver.validRange(pkg.engines.node)).not.toBeNull();
    expect(unsupportedBy(pkg.engines.node)).toEqual([]);
  });

  it('reads the ranges from the lock file, so a too wide range is refused', () => {
    expect(lockedRanges().length).toBeGreaterThan(100);
    expect(unsupportedBy('*').length).toBeGreaterThan(0);
  });

  it('is recorded in the lock file as declared', () => {
    expect(lock.packages[''].engines.node).toBe(pkg.engines.node);
  });
});
