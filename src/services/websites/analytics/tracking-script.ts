import { createHash } from 'node:crypto';

/**
 * The tracking script site owners embed:
 *   <script src="https://stats.example/js/script.js" defer></script>
 * A page view is sent on load with navigator.sendBeacon (a form body: no preflight), falling back to
 * fetch with keepalive; `pa.track(name, value, unit)` sends a custom event. With data-dnt="true" it
 * sends nothing while the browser asks not to be tracked. data-api overrides the collector's URL
 * (default: /api/event on the script's own origin). No cookies, no storage.
 */
export const TRACKING_SCRIPT = `(function () {
  'use strict';
  var script = document.currentScript;
  var attr = function (name) { return script ? script.getAttribute(name) : null; };
  var endpoint = attr('data-api') || new URL('/api/event', script ? script.src : location.href).href;
  var respectDnt = attr('data-dnt') === 'true';
  function doNotTrack() {
    var value = navigator.doNotTrack || window.doNotTrack || navigator.msDoNotTrack;
    return respectDnt && (value === '1' || value === 'yes');
  }
  function send(fields) {
    if (doNotTrack()) return;
    var body = new URLSearchParams();
    body.append('page', location.href);
    body.append('referrer', document.referrer);
    body.append('screen_resolution', screen.width + 'x' + screen.height);
    for (var name in fields) if (fields[name] != null) body.append(name, String(fields[name]));
    try {
      if (navigator.sendBeacon && navigator.sendBeacon(endpoint, body)) return;
    } catch (e) {}
    if (window.fetch) {
      fetch(endpoint, { method: 'POST', body: body, keepalive: true, credentials: 'omit' }).catch(function () {});
    }
  }
  window.pa = window.pa || {};
  window.pa.track = function (name, value, unit) {
    send({ 'event[name]': name, 'event[value]': value, 'event[unit]': unit });
  };
  send({});
})();
`;

/** A strong validator of the script's bytes. */
export const TRACKING_SCRIPT_ETAG = `"${createHash('sha256').update(TRACKING_SCRIPT).digest('base64url').slice(0, 27)}"`;

/** Whether an If-None-Match header names the script's current version (or is "*"). */
export function notModified(ifNoneMatch: string | undefined): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .some((tag) => tag === TRACKING_SCRIPT_ETAG || tag === '*');
}
