import { describe, expect, it } from 'vitest';
import raw from '../src/catalog/catalog.json' with { type: 'json' };
import { CATALOG, parseCatalog } from '../src/catalog/load-catalog.js';

/** The lists interface-v1.md reproduces, copied from its endpoint table (order and case kept). */
const REPRODUCED: Record<string, string> = {
  'token-price-usd': 'arbitrum, ethereum, fogo, solana',
  'transaction-base-fee-total-usd':
    'arbitrum, avalanche, base, berachain, bob, boba, ethereum, fogo, hyperliquid, ' +
    'ink, katana, megaeth, mode, monad, plasma, polygon, shape, solana, superseed, ' +
    'worldchain, zora',
  'stablecoin-supply-total-usd':
    'aptos, arbitrum, avalanche, base, berachain, bnb, ethereum, hyperevm, ' +
    'ink, katana, optimism, plasma, polygon, solana, tron, unichain, worldchain, ' +
    'zksync',
  'transaction-fail-total':
    'aptos, arbitrum, avalanche, base, berachain, bnb, bob, boba, celestia, ' +
    'ethereum, fogo, hyperevm, ink, katana, megaeth, mode, monad, optimism, ' +
    'plasma, polygon, shape, solana, superseed, tron, unichain, worldchain, ' +
    'zksync, zora',
  'treasury-market-cap-usd':
    'ASST, BMNR, BNC, BNKK, BRR, BTBT, BTCM, BTCS, CEP, CEPO, DFDV, ETHM, ' +
    'ETHZ, FGNX, FWDI, GAME, HSDT, HYPD, IPST, MSTR, NAKA, PAPL, PURR, SBET, ' +
    'SLAI, SLMT, SMLR, SQNS, STSS, SUIG, UPXI, XXI',
  'transaction-fee-med-native':
    'arbitrum, base, bob, boba, ethereum, hyperevm, ink, katana, megaeth, ' +
    'mode, monad, shape, solana, superseed, worldchain, zora',
  'sequencer-cost-total': 'arbitrum, base, katana, optimism, unichain, zksync',
  'treasury-nav-eth-usd': 'BMNR, BTBT, BTCS, ETHM, ETHZ, FGNX, GAME, SBET',
  'treasury-volume-usd':
    'BMNR, BNC, BTBT, BTCS, CEP, CEPO, DFDV, ETHM, ETHZ, GAME, HYPD, MSTR, SBET, SMLR, SQNS, STKE, UPXI',
  'priority-fees-usd': 'arbitrum, base, ethereum, solana',
  'priority-fees': 'arbitrum, base, ethereum, solana',
  'other-fees-usd': 'arbitrum, ethereum',
  'etf-flows-btc': 'bitcoin',
  price: 'arbitrum, ethereum, solana',
};

const INTEGER_METRICS = ['etf-num-products', 'transaction-fail-total', 'launchpad-tokens-launched'];
const PROJECT_REQUIRED = [
  'etf-num-products',
  'treasury-volume-usd',
  'priority-fees-usd',
  'priority-fees',
  'other-fees-usd',
  'etf-flows-btc',
  'price',
];
const RULE_4_METRICS = [
  'transaction-l1-fee-total-usd',
  'staking-mev-yield-native',
  'launchpad-volume-usd',
  'staking-liquid-rate',
  'staking-apy',
];

const metric = (name: string) => {
  const m = CATALOG.byName.get(name);
  if (m === undefined) throw new Error(`catalog has no ${name}`);
  return m;
};

/** A deep copy of the shipped catalog document to break in one place. */
const copy = (): {
  lists: Record<string, { slugs: string[] }>;
  metrics: Record<string, unknown>[];
  groups: { name: string; description: string; projects: string[] }[];
} => structuredClone(raw) as never;

describe('the shipped catalog', () => {
  it('has the 24 metrics of interface-v1.md in its order', () => {
    expect(CATALOG.metrics.map((m) => m.name)).toEqual([
      'etf-num-products',
      'etf-aum-change-pct',
      'token-price-usd',
      'transaction-base-fee-total-usd',
      'stablecoin-supply-total-usd',
      'transaction-fail-total',
      'treasury-market-cap-usd',
      'outstanding-mnav',
      'transaction-fee-med-native',
      'launchpad-tokens-launched',
      'sequencer-cost-total',
      'volume-usd',
      'treasury-nav-eth-usd',
      'treasury-volume-usd',
      'priority-fees-usd',
      'priority-fees',
      'other-fees-usd',
      'etf-flows-btc',
      'price',
      'transaction-l1-fee-total-usd',
      'staking-mev-yield-native',
      'launchpad-volume-usd',
      'staking-liquid-rate',
      'staking-apy',
    ]);
  });

  it.each(Object.entries(REPRODUCED))('copies the %s list of interface-v1.md slug by slug', (name, list) => {
    expect(metric(name).projects).toEqual(list.split(', '));
    expect(metric(name).sampleProjects).toBe(false);
  });

  it('gives outstanding-mnav the treasury tickers except PAPL (31 values)', () => {
    const expected = REPRODUCED['treasury-market-cap-usd']!.split(', ').filter((t) => t !== 'PAPL');
    expect(metric('outstanding-mnav').projects).toEqual(expected);
    expect(expected).toHaveLength(31);
  });

  it('marks integer metrics and the seven metrics that require project', () => {
    for (const m of CATALOG.metrics) {
      expect(m.valueKind, m.name).toBe(INTEGER_METRICS.includes(m.name) ? 'integer' : 'decimal');
      expect(m.projectRequired, m.name).toBe(PROJECT_REQUIRED.includes(m.name));
    }
  });

  it('uses the same 76 fund-issuer sample slugs for both ETF metrics', () => {
    const issuers = metric('etf-num-products').projects;
    expect(issuers).toHaveLength(76);
    expect(new Set(issuers).size).toBe(76);
    expect(metric('etf-aum-change-pct').projects).toEqual(issuers);
    expect(metric('etf-num-products').sampleProjects).toBe(true);
  });

  it('has 12 sample venues with exactly one upper-case slug', () => {
    const venues = metric('volume-usd').projects;
    expect(venues).toHaveLength(12);
    expect(venues.filter((v) => v !== v.toLowerCase())).toHaveLength(1);
    expect(metric('volume-usd').sampleProjects).toBe(true);
  });

  it('has 14 launchpad values: the five chains, other-launchpads and eight more', () => {
    const values = metric('launchpad-tokens-launched').projects;
    expect(values).toHaveLength(14);
    expect(values).toEqual(expect.arrayContaining(['avalanche', 'base', 'bnb', 'solana', 'zora', 'other-launchpads']));
  });

  it('flags the lists of the five rule-4 metrics as samples and does not require project for them', () => {
    for (const name of RULE_4_METRICS) {
      expect(metric(name).sampleProjects, name).toBe(true);
      expect(metric(name).projectRequired, name).toBe(false);
      expect(metric(name).projects.length, name).toBeGreaterThan(0);
    }
  });
});

describe('catalog validation at start-up', () => {
  it('refuses a slug listed twice for one metric', () => {
    const doc = copy();
    doc.lists['trading-venues']!.slugs[1] = doc.lists['trading-venues']!.slugs[0]!;
    expect(() => parseCatalog(doc)).toThrow(/slug "binance" appears twice/);
  });

  it('refuses two slugs that collide once - becomes _', () => {
    const doc = copy();
    (doc.metrics.find((m) => m.name === 'price') as { projects: string[] }).projects.push('other_launchpads');
    expect(() => parseCatalog(doc)).toThrow(/GraphQL enum value "other_launchpads"/);
  });

  it('refuses a list whose count differs from the stated one', () => {
    const doc = copy();
    doc.lists['fund-issuers']!.slugs.pop();
    expect(() => parseCatalog(doc)).toThrow(/expected 76 slugs, found 75/);
  });

  it('refuses a venue list with no upper-case slug', () => {
    const doc = copy();
    doc.lists['trading-venues']!.slugs = doc.lists['trading-venues']!.slugs.map((s) => s.toLowerCase());
    expect(() => parseCatalog(doc)).toThrow(/expected 1 slugs with upper-case letters, found 0/);
  });

  it('refuses a launchpad list without other-launchpads', () => {
    const doc = copy();
    const list = doc.lists['launchpads']!.slugs;
    list[list.indexOf('other-launchpads')] = 'misc-launchpads';
    expect(() => parseCatalog(doc)).toThrow(/expected slug "other-launchpads" is missing/);
  });

  it('refuses a slug that cannot become a GraphQL name', () => {
    const doc = copy();
    (doc.metrics.find((m) => m.name === 'price') as { projects: string[] }).projects.push('21shares');
    expect(() => parseCatalog(doc)).toThrow(/"21shares" cannot be a GraphQL name/);
  });

  it('has groups whose members are all slugs of some metric, each group with members for some metric', () => {
    expect(CATALOG.groups.map((g) => g.name)).toEqual(
      expect.arrayContaining(['l2-rollups', 'eth-treasuries', 'btc-treasuries', 'us-spot-btc-etf-issuers']),
    );
    for (const group of CATALOG.groups) {
      for (const slug of group.projects) expect(CATALOG.allProjects, `${group.name}: ${slug}`).toContain(slug);
      expect(
        CATALOG.metrics.some((m) => group.projects.some((p) => m.projects.includes(p))),
        group.name,
      ).toBe(true);
    }
  });

  it('refuses a group naming a slug no metric has, or naming one twice, or two groups of one name', () => {
    const unknown = copy();
    unknown.groups[0]!.projects.push('nowhere-chain');
    expect(() => parseCatalog(unknown)).toThrow(/group l2-rollups: "nowhere-chain" is not a project of any metric/);
    const twice = copy();
    twice.groups[0]!.projects.push(twice.groups[0]!.projects[0]!);
    expect(() => parseCatalog(twice)).toThrow(/group l2-rollups: slug "arbitrum" appears twice/);
    const same = copy();
    same.groups.push({ ...same.groups[0]! });
    expect(() => parseCatalog(same)).toThrow(/group "l2_rollups" appears twice/);
  });

  it('refuses a metric that names an unknown list, and an unknown value kind', () => {
    const doc = copy();
    (doc.metrics[0] as { list: string }).list = 'nope';
    expect(() => parseCatalog(doc)).toThrow(/unknown list "nope"/);
    const bad = copy();
    (bad.metrics[0] as { valueKind: string }).valueKind = 'float';
    expect(() => parseCatalog(bad)).toThrow(/catalog is invalid/);
  });
});
