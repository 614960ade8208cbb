import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG } from '../src/catalog/load-catalog.js';
import { projectId } from './support/project-id.js';
import { startTestService, type TestService } from './support/service.js';
import { STORE_KINDS } from './support/stores.js';

const RANGE = 'start_date=2026-01-05&end_date=2026-03-31';

for (const kind of STORE_KINDS) {
  describe.skipIf(!kind.available)(`REST extension parameters on ${kind.name}`, () => {
    let svc: TestService;
    beforeAll(async () => {
      svc = await startTestService(kind);
    });
    afterAll(async () => svc?.stop());

    const text = async (path: string) => {
      const res = await svc.get(path);
      expect(res.status, path).toBe(200);
      return res.text();
    };

    it(
      'answers interval=day, with or without an aggregation, in exactly the ' + "bytes of the contract's request",
      async () => {
        const legacy = await text(`/v1/metrics/etf-num-products?project=blackrock,fidelity&${RANGE}`);
        expect(legacy).toContain('"spot":');
        for (const extra of [
          'interval=day',
          'interval=day&aggregation=sum',
          'interval=day&fill=none',
          'aggregation=max',
        ]) {
          expect(await text(`/v1/metrics/etf-num-products?project=blackrock,fidelity&${RANGE}&${extra}`), extra).toBe(
            legacy,
          );
        }
      },
    );

    it.each([
      ['interval', 'hour', 'day, week, month, quarter, year'],
      ['aggregation', 'median', 'sum, avg, min, max, first, last'],
      ['fill', 'linear', 'none, null, zero, previous'],
      ['transform', 'log', 'moving_average, change, percent_change, cumulative_sum'],
    ])('refuses %s=%s with a 400 naming the parameter and the allowed values', async (param, value, allowed) => {
      const res = await svc.get(`/v1/metrics/price?project=ethereum&${param}=${value}`);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      const body = (await res.json()) as { errors: { param: string; message: string }[] };
      expect(body.errors).toEqual([{ param, message: `expected one of ${allowed}, got "${value}"` }]);
    });

    it.each([
      ['window=0&transform=moving_average', 'expected a whole number of buckets from 1 to 3650, got "0"'],
      ['window=seven&transform=moving_average', 'expected a whole number of buckets from 1 to 3650, got "seven"'],
      ['window=3651&transform=moving_average', 'expected a whole number of buckets from 1 to 3650, got "3651"'],
      ['window=3&transform=change', 'window goes with the moving_average transform only'],
    ])('refuses %s with a 400 about window', async (query, message) => {
      const res = await svc.get(`/v1/metrics/price?project=ethereum&${query}`);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { errors: unknown[] }).errors).toEqual([{ param: 'window', message }]);
    });

    it('keeps integer metrics whole under sum, min, max, first and last, and averages them as decimals', async () => {
      for (const aggregation of ['sum', 'min', 'max', 'first', 'last']) {
        const body = await text(
          `/v1/metrics/transaction-fail-total?project=ethereum,base&${RANGE}&interval=month&aggregation=${aggregation}`,
        );
        expect(body, aggregation).not.toMatch(/"value":-?\d+\./);
        expect(body).toMatch(/"value":\d+\}/);
      }
      expect(
        await text(`/v1/metrics/transaction-fail-total?project=ethereum&${RANGE}&interval=month&aggregation=avg`),
      ).toMatch(/"value":\d+\.\d+/);
    });

    it(
      "sends Last-Modified, the series' last write, and answers a later If-Modified-Since " +
        'with 304 unless If-None-Match says otherwise',
      async () => {
        const path = `/v1/metrics/price?project=ethereum,solana&${RANGE}&interval=week`;
        const first = await svc.get(path);
        const lastModified = first.headers.get('last-modified')!;
        expect(Date.parse(lastModified)).toBeGreaterThan(Date.parse('2026-01-01'));
        const same = await svc.get(path, { headers: { 'if-modified-since': lastModified } });
        expect(same.status).toBe(304);
        expect(await same.text()).toBe('');
        const earlier = await svc.get(path, {
          headers: { 'if-modified-since': new Date(Date.parse(lastModified) - 1000).toUTCString() },
        });
        expect(earlier.status).toBe(200);
        const otherTag = await svc.get(path, {
          headers: { 'if-modified-since': lastModified, 'if-none-match': 'W/"other"' },
        });
        expect(otherTag.status).toBe(200);
      },
    );

    it(
      'ignores an If-Modified-Since that is not an HTTP-date, as RFC 9110 asks, ' + 'and reads the obsolete forms',
      async () => {
        const path = `/v1/metrics/price?project=ethereum,solana&${RANGE}&interval=week`;
        const lastModified = Date.parse((await svc.get(path)).headers.get('last-modified')!);
        const later = new Date(lastModified + 86_400_000);
        for (const notADate of ['2099-01-01', `${later.toISOString()}`, later.toUTCString().replace('GMT', '+0000')]) {
          const res = await svc.get(path, { headers: { 'if-modified-since': notADate } });
          expect(res.status, notADate).toBe(200);
          expect(Object.keys(await res.json())).toEqual(['ethereum', 'solana']);
        }
        // The same instant as RFC 850 and asctime dates: both still mean "not modified".
        const [weekday, day, month, year, time] = later.toUTCString().replace(',', '').split(' ');
        const longDay = {
          Sun: 'Sunday',
          Mon: 'Monday',
          Tue: 'Tuesday',
          Wed: 'Wednesday',
          Thu: 'Thursday',
          Fri: 'Friday',
          Sat: 'Saturday',
        }[weekday!]!;
        for (const obsolete of [
          `${longDay}, ${day}-${month}-${year!.slice(2)} ${time} GMT`,
          `${weekday} ${month} ${String(Number(day)).padStart(2, ' ')} ${time} ${year}`,
        ]) {
          const res = await svc.get(path, { headers: { 'if-modified-since': obsolete } });
          expect(res.status, obsolete).toBe(304);
        }
      },
    );

    it('marks a refused option value it shortens, and never cuts a character in two', async () => {
      const refused = async (query: string) =>
        (
          (await (await svc.get(`/v1/metrics/price?project=ethereum&${query}`)).json()) as {
            errors: { message: string }[];
          }
        ).errors[0]!.message;
      expect(await refused(`interval=${'w'.repeat(100)}`)).toMatch(new RegExp(`got "${'w'.repeat(64)}…"$`));
      expect(await refused(`transform=moving_average&window=${'9'.repeat(100)}`)).toMatch(
        new RegExp(`got "${'9'.repeat(64)}…"$`),
      );
      // 'a' and 40 emoji: 64 UTF-16 units end inside the 32nd emoji.
      expect(await refused(`fill=a${encodeURIComponent('😀'.repeat(40))}`)).toMatch(
        new RegExp(`got "a${'😀'.repeat(31)}…"$`, 'u'),
      );
      expect(await refused('aggregation=median')).toMatch(/got "median"$/);
      // Every value echoed back is shortened the same way: as_of, the feed's limit, an export's format, a metric's
      // name.
      const problem = async (path: string) =>
        (await (await svc.get(path)).json()) as { detail: string; errors?: { message: string }[] };
      expect(
        (await problem(`/v1/metrics/price?project=ethereum&as_of=${'x'.repeat(100)}`)).errors![0]!.message,
      ).toMatch(new RegExp(`got "${'x'.repeat(64)}…"$`));
      expect((await problem(`/v1/changes?limit=${'7'.repeat(100)}`)).errors![0]!.message).toMatch(
        new RegExp(`got "${'7'.repeat(64)}…"$`),
      );
      expect((await problem(`/v1/export?format=${'c'.repeat(100)}`)).errors![0]!.message).toMatch(
        new RegExp(`got "${'c'.repeat(64)}…"$`),
      );
      expect((await problem(`/v1/metrics/${'m'.repeat(100)}`)).detail).toContain(`unknown metric "${'m'.repeat(64)}…"`);
    });

    it('changes the ETag with the options', async () => {
      const a = await svc.get(`/v1/metrics/price?project=ethereum&${RANGE}&interval=week`);
      const b = await svc.get(`/v1/metrics/price?project=ethereum&${RANGE}&interval=month`);
      expect(a.headers.get('etag')).not.toBe(b.headers.get('etag'));
    });

    describe('bulk export', () => {
      const options = `${RANGE}&interval=week&fill=null&transform=change`;

      it('streams CSV rows that equal the REST answers of each metric, with a header and as a download', async () => {
        const res = await svc.get(
          `/v1/export?metric=price,token-price-usd&project=solana,ethereum&${options}&format=csv`,
        );
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
        expect(res.headers.get('content-disposition')).toBe('attachment; filename="metrics-export.csv"');
        const [header, ...lines] = (await res.text()).trimEnd().split('\n');
        expect(header).toBe('metric,project,date,value');
        const rows = lines
          .map((l) => l.split(','))
          .map(([m, p, d, v]) => ({ metric: m, project: p, date: d, value: v === '' ? null : Number(v) }));
        expect(rows).toEqual(await restRows(['price', 'token-price-usd'], ['solana', 'ethereum'], options));
        expect(lines.every((l) => /^[a-z-]+,[a-z]+,\d{4}-\d{2}-\d{2},(-?\d+(\.\d*[1-9])?)?$/.test(l))).toBe(true);
      });

      it('streams NDJSON objects in the same order, nulls included', async () => {
        // From the first stored day, the first change has no previous day: null.
        const catalog = (await (await svc.get('/v1/metrics')).json()) as {
          metrics: { name: string; projects: { slug: string; firstDate: string }[] }[];
        };
        const first = catalog.metrics
          .find((m) => m.name === 'price')!
          .projects.find((p) => p.slug === 'ethereum')!.firstDate;
        const query = `start_date=${first}&end_date=2026-03-31&transform=change`;
        const res = await svc.get(`/v1/export?metric=token-price-usd,price&project=ethereum&${query}&format=ndjson`);
        expect(res.headers.get('content-type')).toBe('application/x-ndjson');
        const objects = (await res.text())
          .trimEnd()
          .split('\n')
          .map((l) => JSON.parse(l) as { metric: string; project: string; date: string; value: number | null });
        expect(objects).toEqual(await restRows(['token-price-usd', 'price'], ['ethereum'], query));
        expect(objects.find((o) => o.metric === 'price')).toMatchObject({ date: first, value: null });
      });

      it(
        'exports every project of each metric, in catalog order, when project ' +
          'is omitted; CSV is the default format',
        async () => {
          const res = await svc.get(`/v1/export?metric=sequencer-cost-total&start_date=2026-06-29`);
          expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
          const projects = (await res.text())
            .trimEnd()
            .split('\n')
            .slice(1)
            .map((l) => l.split(',')[1]);
          expect([...new Set(projects)]).toEqual(CATALOG.byName.get('sequencer-cost-total')!.projects);
        },
      );

      it.each([
        ['no metric', 'format=csv', 'metric', /name one metric/],
        ['an unknown metric', 'metric=nope', 'metric', /unknown metric "nope"/],
        ['a metric that requires projects', 'metric=price', 'project', /a project is required for price/],
        [
          'a project one of the metrics does not have',
          'metric=token-price-usd,price&project=fogo',
          'project',
          /"fogo" is not a project of price/,
        ],
        [
          'an unknown format',
          'metric=price&project=ethereum&format=xml',
          'format',
          /expected one of csv, ndjson, parquet, arrow, got "xml"/,
        ],
        [
          'an unknown extra',
          'metric=price&project=ethereum&extra=yes',
          'extra',
          /expected one of omit, include, got "yes"/,
        ],
        ['an unknown parameter', 'metric=price&project=ethereum&metrics=x', 'metrics', /unknown parameter/],
      ])('refuses %s with a 400 problem naming it', async (_label, query, param, message) => {
        const res = await svc.get(`/v1/export?${query}`);
        expect(res.status).toBe(400);
        expect(res.headers.get('content-type')).toBe('application/problem+json');
        expect(res.headers.get('content-disposition')).toBeNull();
        const body = (await res.json()) as { errors: { param: string; message: string }[] };
        expect(body.errors[0]!.param).toBe(param);
        expect(body.errors[0]!.message).toMatch(message);
      });
    });

    it(
      'aggregates an extra field over the days that hold a number in it, so ' + 'a stored non-number there is no 500',
      async () => {
        const week = 'project=blackrock&start_date=2026-02-02&end_date=2026-02-08';
        type Day = { date: string; value: number; spot: number | null; futures: number | null };
        const daily = (JSON.parse(await text(`/v1/metrics/etf-num-products?${week}`)) as { blackrock: Day[] })
          .blackrock;
        expect(daily.length).toBeGreaterThan(1);
        // What an import took before it refused non-numbers in the catalog's extra fields.
        const store = svc.running.services.store;
        await store.query(
          `update point set extra = jsonb_set(extra, '{spot}', '"</script>"') where day = $1 and project_id = $2`,
          [daily[0]!.date, await projectId(store, 'etf-num-products', 'blackrock')],
        );

        const weekly = JSON.parse(await text(`/v1/metrics/etf-num-products?${week}&interval=week&aggregation=sum`)) as {
          blackrock: Day[];
        };
        const sum = (days: Day[], field: 'value' | 'spot' | 'futures') =>
          days.reduce((total, d) => total + (d[field] ?? 0), 0);
        expect(weekly.blackrock).toEqual([
          {
            date: '2026-02-02',
            value: sum(daily, 'value'),
            spot: sum(daily.slice(1), 'spot'),
            futures: sum(daily, 'futures'),
            leveraged: expect.anything(),
          },
        ]);
      },
    );

    /** The REST answers of several metrics, flattened into long rows. */
    async function restRows(metrics: string[], projects: string[], query: string) {
      const rows: { metric: string; project: string; date: string; value: number | null }[] = [];
      for (const metric of metrics) {
        const body = (await (
          await svc.get(`/v1/metrics/${metric}?project=${projects.join(',')}&${query}`)
        ).json()) as Record<string, { date: string; value: number | null }[]>;
        for (const project of projects)
          for (const p of body[project]!) rows.push({ metric, project, date: p.date, value: p.value });
      }
      return rows;
    }
  });
}
