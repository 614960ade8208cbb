import type { DataPoint } from '../series/series-loader.js';
import type { Builder } from './builder.js';

export function addDataPoint(builder: Builder) {
  return builder.objectRef<DataPoint>('DataPoint').implement({
    description: 'One daily value of one project.',
    fields: (t) => ({
      date: t.field({ type: 'Date', description: 'The calendar day the value belongs to.', resolve: (p) => p.date }),
      value: t.exposeFloat('value', {
        description: 'The value; a whole number for INTEGER metrics (JSON integers on the wire).',
      }),
      extra: t.field({
        type: 'JSON',
        nullable: true,
        description: 'Extra named fields of the point (etf-num-products breaks its count down); null for other metrics.',
        resolve: (p) => p.extra,
      }),
    }),
  });
}

export type DataPointRef = ReturnType<typeof addDataPoint>;
