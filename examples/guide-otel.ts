/**
 * OpenTelemetry metrics (docs/guide.md, "Events and stats"): the `kindly-calls/otel` subpath
 * reports each downstream's stats as observable instruments. Needs `@opentelemetry/api`.
 *
 * Run: npx tsx examples/guide-otel.ts
 */
// #region readme
import { metrics } from '@opentelemetry/api';
import { downstream } from 'kindly-calls';
import { instrumentDownstreams } from 'kindly-calls/otel';

const payments = downstream('payments');
const inventory = downstream('inventory');
const stop = instrumentDownstreams([payments, inventory], { meter: metrics.getMeter('my-service') });
// … on shutdown:
stop(); // detaches the instruments
console.log('instrumented payments and inventory');
// #endregion
