/**
 * OpenTelemetry metrics scraped by Prometheus: kindly's histograms and counters go through
 * the OpenTelemetry SDK and its Prometheus exporter; this example serves the scrape
 * endpoint on loopback, makes a few calls against a flaky service, then scrapes it once
 * and prints the kindly lines.
 *
 * Run: npx tsx examples/otel-prometheus.ts
 */

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { downstream } from 'kindly-calls';
import { fetchThrough } from 'kindly-calls/http';
import { instrumentDownstreams } from 'kindly-calls/otel';

// A service that answers 503 to every third request.
let n = 0;
const service = createServer((_req, res) => res.writeHead(++n % 3 === 0 ? 503 : 200).end('ok'));
await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
const serviceUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}/orders?api_key=secret`;

const exporter = new PrometheusExporter({ preventServerStart: true });
const meterProvider = new MeterProvider({ readers: [exporter] });
const orders = downstream('orders', { retry: { backoff: { baseMs: 5 } } });
const stop = instrumentDownstreams(orders, { meter: meterProvider.getMeter('shop') });

for (let i = 0; i < 12; i++) await fetchThrough(orders, serviceUrl);

// The scrape endpoint (a real deployment lets the exporter serve :9464/metrics itself).
const metricsServer = createServer((req, res) => exporter.getMetricsRequestHandler(req, res));
await new Promise<void>((resolve) => metricsServer.listen(0, '127.0.0.1', resolve));
const scrape = await (await fetch(`http://127.0.0.1:${(metricsServer.address() as AddressInfo).port}/metrics`)).text();
// The kindly lines, with two buckets of each histogram for brevity.
const wanted = /^(# (HELP|TYPE) )?(http_client_request_duration|kindly_(requests|retries|retry_wait_duration|call_duration))/;
const someBuckets = (line: string) => !line.includes('_bucket{') || /le="(0\.1|\+Inf)"/.test(line);
console.log(
  scrape
    .split('\n')
    .filter((line) => wanted.test(line) && someBuckets(line))
    .join('\n'),
);

stop();
await meterProvider.shutdown();
metricsServer.close();
service.close();
