-- wrk script of `npm run bench`: every request is a POST with a small JSON body (BENCH_BODY, set by
-- bench/run.js), and the summary is printed as one JSON line the bench parses. No response()
-- callback: defining one makes wrk hand every response's headers and body to Lua, which costs
-- the load generator CPU that the server under test should get.
wrk.method = "POST"
wrk.body = os.getenv("BENCH_BODY") or '{"event":"bench"}'
wrk.headers["Content-Type"] = "application/json"

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_SUMMARY {"responses":%d,"durationUs":%d,"bytes":%d,"connectErrors":%d,"readErrors":%d,' ..
    '"writeErrors":%d,"non2xx3xx":%d,"timeouts":%d,"p50Us":%d,"p90Us":%d,"p99Us":%d,"maxUs":%d,"meanUs":%.1f}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
