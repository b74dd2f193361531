// The metrics issue 22 added, as exposed: responses by route and status, their time, the open
// requests, the last reload's gauges and the self-audit counter.
import { expect, test } from 'vitest';
import { GatewayMetrics } from '../../src/metrics/gateway-metrics.js';
import { sampleValue, samples } from '../helpers/prometheus.js';

test('responses are counted per route and status, in first-seen order, with their time', async () => {
  const metrics = new GatewayMetrics();
  for (let i = 0; i < 3; i++) metrics.opened();
  metrics.response('api', 200, 0.002);
  metrics.response('', 404, 0.0005);
  metrics.response('api', 200, 0.02);
  const text = await metrics.registry.metrics();
  expect(samples(text, 'tollgate_responses_total')).toEqual([
    'tollgate_responses_total{route="api",status="200"} 2',
    'tollgate_responses_total{route="",status="404"} 1',
  ]);
  expect(sampleValue(text, 'tollgate_request_duration_seconds_bucket{le="0.001",route=""}')).toBe(1);
  expect(sampleValue(text, 'tollgate_request_duration_seconds_bucket{le="0.005",route="api"}')).toBe(1);
  expect(sampleValue(text, 'tollgate_request_duration_seconds_bucket{le="0.025",route="api"}')).toBe(2);
  expect(sampleValue(text, 'tollgate_request_duration_seconds_count{route="api"}')).toBe(2);
  expect(sampleValue(text, 'tollgate_request_duration_seconds_sum{route="api"}')).toBeCloseTo(0.022, 10);
  expect(sampleValue(text, 'tollgate_open_requests')).toBe(0);
});

test('open requests: opened, not yet closed', async () => {
  const metrics = new GatewayMetrics();
  metrics.opened();
  metrics.opened();
  metrics.response('r', 200, 0.001);
  expect(sampleValue(await metrics.registry.metrics(), 'tollgate_open_requests')).toBe(1);
});

test('the last reload: 1 at start, 0 after a failure, 1 after a success; the time moves on', async () => {
  const metrics = new GatewayMetrics();
  const before = Date.now() / 1000;
  metrics.configApplied(['a', 'b'], true);
  let text = await metrics.registry.metrics();
  expect(sampleValue(text, 'tollgate_config_last_reload_success')).toBe(1);
  const started = sampleValue(text, 'tollgate_config_last_reload_timestamp_seconds')!;
  expect(started).toBeGreaterThanOrEqual(before);
  expect(samples(text, 'tollgate_admitted_over_limit_total')).toEqual([
    'tollgate_admitted_over_limit_total{limiter="a"} 0',
    'tollgate_admitted_over_limit_total{limiter="b"} 0',
  ]);
  metrics.configReload(false);
  text = await metrics.registry.metrics();
  expect(sampleValue(text, 'tollgate_config_last_reload_success')).toBe(0);
  expect(sampleValue(text, 'tollgate_config_last_reload_timestamp_seconds')).toBeGreaterThanOrEqual(started);
  expect(sampleValue(text, 'tollgate_config_reloads_total{result="failure"}')).toBe(1);
  metrics.configReload(true);
  metrics.configApplied(['a', 'c'], false);
  metrics.admittedOverLimit('c');
  text = await metrics.registry.metrics();
  expect(sampleValue(text, 'tollgate_config_last_reload_success')).toBe(1);
  expect(samples(text, 'tollgate_admitted_over_limit_total')).toEqual([
    'tollgate_admitted_over_limit_total{limiter="a"} 0',
    'tollgate_admitted_over_limit_total{limiter="b"} 0',
    'tollgate_admitted_over_limit_total{limiter="c"} 1',
  ]);
});
