import { CATALOG } from '../../src/catalog/load-catalog.js';
import { fromEpochDay, toEpochDay } from '../../src/dates.js';

/** A request shape: how many projects of one metric over how many days. */
export interface Shape {
  name: string;
  projects: number;
  days: number;
  connections: number[];
  /** Timed rounds per target (each figure is their median) and the length of each. */
  rounds: number;
  seconds: number;
  trackMemory?: boolean;
}

export const BENCH_METRIC = 'etf-aum-change-pct';

export const SHAPES: Shape[] = [
  { name: '1x365', projects: 1, days: 365, connections: [1, 8, 32], rounds: 2, seconds: 6 },
  // The shape the targets are set on: rounds of 4 s on two shared cores swing by ±15%
  // (1,298 to 1,686 req/s for the floor in one run), and with five rounds the ratio of
  // two targets' medians still moved by 3-5% between runs of the same code. Ten: each of
  // the five targets then takes every place in the rotation twice (run.ts).
  { name: '3x365', projects: 3, days: 365, connections: [1, 8, 32], rounds: 10, seconds: 4 },
  { name: '30x365', projects: 30, days: 365, connections: [1, 8, 32], rounds: 2, seconds: 6 },
  { name: '76x3650', projects: 76, days: 3650, connections: [1, 8, 32], rounds: 2, seconds: 8, trackMemory: true },
];

export interface Target {
  name: 'floor' | 'rest' | 'graphql' | 'rest-hot' | 'graphql-hot';
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** The points per slug in a body of this target, to compare with the floor's. */
  pointsOf(body: string): Record<string, unknown>;
}

/** The three ways of asking for the same points. */
export function targetsFor(
  shape: Shape,
  lastDay: string,
  projectIds: number[],
  ports: { floor: number; service: number },
  key: string,
): Target[] {
  const metric = CATALOG.byName.get(BENCH_METRIC)!;
  const slugs = metric.projects.slice(0, shape.projects);
  const to = lastDay;
  const from = fromEpochDay(toEpochDay(lastDay) - shape.days + 1);
  const ids = projectIds.slice(0, shape.projects);
  const restPoints = (body: string) => JSON.parse(body) as Record<string, unknown>;
  const graphqlQuery =
    `query Bench($projects: [Project!], $from: Date, $to: Date) {
    metric(name: ${BENCH_METRIC.replaceAll('-', '_')}, projects: $projects, ` +
    `from: $from, to: $to) { series { slug points { date value } } }
  }`;
  return [
    {
      name: 'floor',
      url: `http://127.0.0.1:${ports.floor}/?ids=${ids.join(',')}&slugs=${slugs.join(',')}&from=${from}&to=${to}`,
      method: 'GET',
      headers: {},
      pointsOf: restPoints,
    },
    {
      name: 'rest',
      url:
        `http://127.0.0.1:${ports.service}/v1/metrics/${BENCH_METRIC}` +
        `?project=${slugs.join(',')}&start_date=${from}&end_date=` +
        `${to}`,
      method: 'GET',
      headers: { 'x-api-key': key },
      pointsOf: restPoints,
    },
    {
      name: 'graphql',
      url: `http://127.0.0.1:${ports.service}/graphql`,
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({
        query: graphqlQuery,
        variables: { projects: slugs.map((s) => s.replaceAll('-', '_')), from, to },
      }),
      pointsOf: (body) => {
        const result = JSON.parse(body) as {
          data?: { metric: { series: { slug: string; points: unknown[] }[] } };
          errors?: unknown;
        };
        if (!result.data) throw new Error(`graphql answered errors: ${JSON.stringify(result.errors).slice(0, 300)}`);
        return Object.fromEntries(result.data.metric.series.map((s) => [s.slug, s.points]));
      },
    },
  ];
}
