/**
 * The statistics pages' scripts, served under /_/assets/ (the pages' CSP allows no inline script).
 * Everything they show is on the page without them too.
 */

/**
 * chart.js: draws the visitors and pageviews chart from the page's JSON data block (#chart-data)
 * with uPlot. Counts get whole-number ticks; days read as ISO dates (UTC) on the axis and in the
 * legend, which the page renders with the range's totals and the script sets to a day's figures
 * while the pointer is on it. Visitors are a filled area under a solid line, pageviews a dashed line
 * over it, so both stay visible when they are equal. The ticks drawn (on the canvas) are kept in
 * data-x-ticks and data-y-ticks, which the tests read.
 */
export const CHART_SCRIPT = `
(function () {
  var data = document.getElementById('chart-data');
  var box = document.getElementById('chart');
  if (!data || !box || typeof uPlot === 'undefined') return;
  var d = JSON.parse(data.textContent);
  var DAY = 86400;
  var xs = d.days.map(function (day) { return Date.parse(day + 'T00:00:00Z') / 1000; });
  function iso(ts) { return new Date(ts * 1000).toISOString().slice(0, 10); }
  function count(n) { return n.toLocaleString('en-US'); }
  var legendDay = document.getElementById('legend-day');
  var legendVisitors = document.getElementById('legend-visitors');
  var legendPageviews = document.getElementById('legend-pageviews');
  function showLegend(i) {
    if (!legendDay) return;
    if (i == null) {
      legendDay.textContent = d.label;
      legendVisitors.textContent = count(d.totals.visitors);
      legendPageviews.textContent = count(d.totals.pageviews);
    } else {
      legendDay.textContent = d.days[i];
      legendVisitors.textContent = count(d.visitors[i]);
      legendPageviews.textContent = count(d.pageviews[i]);
    }
  }
  var top = Math.max.apply(null, d.pageviews.concat(d.visitors, [0]));
  var yMax = Math.max(1, Math.ceil(top * 1.1));
  var dayIncrs = [1, 2, 3, 7, 14, 28, 56, 91, 182, 364].map(function (n) { return n * DAY; });
  var countIncrs = [];
  for (var p = 1; p <= 1e9; p *= 10) countIncrs.push(p, 2 * p, 5 * p);
  function width() { return Math.max(260, box.clientWidth); }
  var plot = new uPlot({
    width: width(), height: 240,
    legend: { show: false },
    cursor: { points: { size: 8 } },
    scales: {
      x: { time: true, range: function (u, min, max) { return min === max ? [min - DAY / 2, max + DAY / 2] : [min, max]; } },
      y: { range: function () { return [0, yMax]; } },
    },
    series: [
      { value: function (u, ts) { return ts == null ? '' : iso(ts); } },
      { label: 'Visitors', stroke: '#0b57d0', fill: 'rgba(11, 87, 208, 0.14)', width: 3, points: { show: d.days.length <= 62 } },
      { label: 'Pageviews', stroke: '#b3261e', width: 2, dash: [6, 4], points: { show: d.days.length <= 62 } },
    ],
    axes: [
      {
        space: 90, incrs: dayIncrs,
        values: function (u, splits) {
          var days = splits.map(iso);
          box.setAttribute('data-x-ticks', days.join(','));
          return days;
        },
      },
      {
        size: 56, incrs: countIncrs,
        values: function (u, splits) {
          var ticks = splits.map(function (v) { return count(v); });
          box.setAttribute('data-y-ticks', splits.join(','));
          return ticks;
        },
      },
    ],
    hooks: { setCursor: [function (u) { showLegend(u.cursor.idx); }] },
  }, [xs, d.visitors, d.pageviews], box);
  showLegend(null);
  box.addEventListener('mouseleave', function () { showLegend(null); });
  box.setAttribute('data-drawn', 'true');
  window.addEventListener('resize', function () { plot.setSize({ width: width(), height: 240 }); });
})();
`;

/**
 * live.js: the empty state's wait for the first pageview. It polls the realtime figures of the
 * page's website (the section's JSON, `data-poll`) and, once a pageview has arrived, says so and
 * offers the statistics.
 */
export const LIVE_SCRIPT = `
(function () {
  var box = document.getElementById('waiting');
  var status = document.getElementById('waiting-status');
  if (!box || !status || !window.fetch) return;
  var url = box.getAttribute('data-poll');
  var every = Number(box.getAttribute('data-every')) || 3000;
  function plural(n, one, many) { return n + ' ' + (n === 1 ? one : many); }
  function check() {
    fetch(url, { headers: { accept: 'application/json' }, credentials: 'same-origin', cache: 'no-store' })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (live) {
        if (live && live.pageviews > 0) {
          box.setAttribute('data-state', 'live');
          status.textContent = 'Live: the first pageview arrived (' + plural(live.visitors, 'visitor', 'visitors') +
            ', ' + plural(live.pageviews, 'pageview', 'pageviews') + ' in the last ' + live.minutes + ' minutes). ';
          var link = document.createElement('a');
          link.href = location.pathname + location.search;
          link.textContent = 'Show the statistics';
          status.appendChild(link);
          return;
        }
        setTimeout(check, every);
      }, function () { setTimeout(check, every); });
  }
  setTimeout(check, every);
})();
`;
