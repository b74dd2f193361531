/**
 * The operator page's script and style (admin-operator-page.ts), served as files so the CSP needs
 * no inline code. The script refetches the page every few seconds, swaps its live part in, turns
 * the decision totals into rates per second, charts them (uPlot), and sends the one action.
 */
export const OPERATOR_SCRIPT = String.raw`(() => {
  'use strict';
  const REFRESH_MS = 3000;
  const KEEP = 120;
  const series = { t: [], allowed: [], limited: [], exempt: [], refused: [] };
  let previous;
  let chart;

  const sumOf = (totals) => {
    const s = { allowed: 0, limited: 0, exempt: 0, refused: 0, byLimiter: {} };
    for (const t of totals) {
      const row = { allowed: t.allowed + t.shadow_limited, limited: t.limited, exempt: t.exempt, refused: t.refused };
      s.byLimiter[t.name] = row;
      for (const k of ['allowed', 'limited', 'exempt', 'refused']) s[k] += row[k];
    }
    return s;
  };

  const read = (root) => {
    const block = root.querySelector('#totals');
    if (!block) return undefined;
    const data = JSON.parse(block.textContent);
    return { at: Date.parse(data.now) / 1000, sums: sumOf(data.totals) };
  };

  const rate = (now, before, dt) => Math.max(0, (now - before) / dt);

  const sample = (current) => {
    if (previous && current.at > previous.at) {
      const dt = current.at - previous.at;
      series.t.push(current.at);
      for (const k of ['allowed', 'limited', 'exempt', 'refused']) series[k].push(rate(current.sums[k], previous.sums[k], dt));
      if (series.t.length > KEEP) for (const k of Object.keys(series)) series[k].shift();
      for (const cell of document.querySelectorAll('td.rate')) {
        const name = cell.getAttribute('data-limiter');
        const a = current.sums.byLimiter[name];
        const b = previous.sums.byLimiter[name];
        if (!a || !b) continue;
        cell.textContent = ['allowed', 'limited', 'exempt', 'refused'].map((k) => rate(a[k], b[k], dt).toFixed(1)).join(' · ');
      }
      draw();
      document.getElementById('rates-status').textContent = 'Live: ' + series.t.length + ' samples, every ' + REFRESH_MS / 1000 + ' s.';
      document.body.setAttribute('data-samples', String(series.t.length));
    }
    previous = current;
  };

  const draw = () => {
    const box = document.getElementById('rates');
    const data = [series.t, series.allowed, series.limited, series.exempt, series.refused];
    if (typeof uPlot === 'undefined') return;
    if (!chart) {
      chart = new uPlot(
        {
          width: Math.max(320, box.clientWidth),
          height: 220,
          series: [
            {},
            { label: 'allowed', stroke: '#2e7d32', width: 2 },
            { label: 'limited', stroke: '#c62828', width: 2 },
            { label: 'exempt', stroke: '#1565c0', width: 2 },
            { label: 'refused', stroke: '#ef6c00', width: 2 },
          ],
          axes: [{}, { label: 'per second' }],
        },
        data,
        box,
      );
    } else chart.setData(data);
  };

  const refresh = async () => {
    try {
      const res = await fetch('/ui', { cache: 'no-store' });
      if (!res.ok) throw new Error('HTTP ' + res.status);
      const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
      const live = doc.getElementById('live');
      if (live) document.getElementById('live').replaceChildren(...live.childNodes);
      const current = read(document);
      if (current) sample(current);
    } catch (err) {
      document.getElementById('rates-status').textContent = 'Refresh failed: ' + err.message;
    }
    setTimeout(refresh, REFRESH_MS);
  };

  const form = document.getElementById('lift-ban');
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const out = document.getElementById('action-result');
    const f = new FormData(form);
    const path = '/v1/bans/' + encodeURIComponent(f.get('limiter')) + '/' + encodeURIComponent(f.get('key'));
    try {
      const res = await fetch(path, { method: 'DELETE', headers: { authorization: 'Bearer ' + f.get('token') } });
      const body = await res.json();
      out.textContent = res.ok ? 'Lifted.' : body.error.code + ': ' + body.error.message;
    } catch (err) {
      out.textContent = err.message;
    }
  });

  window.addEventListener('DOMContentLoaded', () => {
    const first = read(document);
    if (first) previous = first;
    draw();
    setTimeout(refresh, REFRESH_MS);
  });
})();
`;

export const OPERATOR_STYLE = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1100px; padding: 1rem 1.5rem; color: #1b1b1b; }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; }
h2 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
.note { color: #5f6368; margin: .25rem 0; }
table { border-collapse: collapse; width: 100%; margin: .25rem 0 1rem; }
th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid #e0e0e0; vertical-align: top; }
th.num, td.num { text-align: right; font-variant-numeric: tabular-nums; }
code { font-size: .9em; }
.cards { display: flex; gap: 1rem; flex-wrap: wrap; }
.card { flex: 1 1 300px; border: 1px solid #e0e0e0; border-radius: 6px; padding: .25rem 1rem; }
.card h2 { margin-top: .5rem; }
.ok { color: #2e7d32; font-weight: 600; }
.bad { color: #c62828; font-weight: 600; }
.tag { font-size: .75em; background: #fff3e0; color: #e65100; border-radius: 3px; padding: 0 .3em; }
.chart { min-height: 220px; }
ul.diff { font-family: ui-monospace, monospace; font-size: .85em; padding-left: 1rem; }
table.latency { width: auto; font-size: .85em; }
meter { width: 8rem; vertical-align: middle; }
form label { margin-right: .75rem; }
details summary { font-weight: 600; cursor: pointer; }
`;
