/** The statistics pages' part of pages.css: summary cards, presets, legend, share bars, empty state. */

/** A share bar behind a table's value: one rule per whole percent (the CSP allows no inline style). */
const shareBars = Array.from(
  { length: 101 },
  (_, n) => `td.bar.s${n} { background: linear-gradient(to right, var(--bar) ${n}%, transparent ${n}%); }`,
).join('\n');

export const STATS_STYLE = `
:root { --bar: #dde8fb; --visitors: #0b57d0; --pageviews: #b3261e; }
nav.presets ul { list-style: none; padding: 0; margin: 0.5rem 0; display: flex; flex-wrap: wrap; gap: 0.25rem 0.5rem; }
nav.presets a { display: inline-block; padding: 0.15rem 0.6rem; border: 1px solid var(--line); border-radius: 0.3rem; text-decoration: none; }
nav.presets a[aria-current="true"] { background: var(--fg); border-color: var(--fg); color: #fff; }
.range-error { margin: 0.5rem 0; }
ul.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 12rem), 1fr)); gap: 0.75rem; margin: 1rem 0; padding: 0; list-style: none; }
ul.cards li { background: var(--panel); padding: 0.6rem 1rem; border-radius: 0.5rem; }
ul.cards .label { display: block; color: var(--muted); font-size: 0.9rem; }
ul.cards strong { display: block; font-size: 1.75rem; font-weight: 700; line-height: 1.2; }
.change { font-size: 0.9rem; font-weight: 600; }
.change.up { color: var(--good); } .change.down { color: var(--bad); } .change.same { color: var(--muted); }
.change .muted { font-weight: 400; }
ul.legend { list-style: none; display: flex; flex-wrap: wrap; gap: 0.25rem 1.25rem; padding: 0; margin: 0.25rem 0 0.5rem; }
ul.legend .swatch { display: inline-block; width: 1.5rem; height: 0; border-top: 3px solid; vertical-align: middle; margin-right: 0.35rem; }
ul.legend .visitors .swatch { border-color: var(--visitors); }
ul.legend .pageviews .swatch { border-top-style: dashed; border-color: var(--pageviews); }
ul.legend strong { margin-left: 0.25rem; }
table.top td.bar { background-repeat: no-repeat; }
${shareBars}
details { margin: 0.25rem 0 0.75rem; }
details > summary { cursor: pointer; color: var(--accent); }
table#recent .short { white-space: nowrap; }
@media (max-width: 40rem) {
  /* On a phone the sections and presets scroll sideways in one row, and the cards sit three abreast,
     so the figures and the chart come first. */
  nav.sections ul, nav.presets ul { flex-wrap: nowrap; overflow-x: auto; padding-bottom: 0.25rem; }
  nav.sections li, nav.presets li { flex: none; }
  ul.cards { grid-template-columns: repeat(3, minmax(0, 1fr)); gap: 0.4rem; }
  ul.cards li { padding: 0.4rem 0.5rem; }
  ul.cards strong { font-size: 1.3rem; }
  ul.cards .label, .change { font-size: 0.8rem; }
  .change .muted { display: block; }
  form.range { padding: 0.5rem; }
}
table#recent td.value { overflow-wrap: anywhere; word-break: normal; }
.waiting { background: var(--panel); border-radius: 0.5rem; padding: 0.75rem 1rem; margin: 1rem 0; }
.waiting pre { background: #fff; border: 1px solid var(--line); border-radius: 0.3rem; padding: 0.5rem; white-space: pre-wrap; overflow-wrap: anywhere; }
.waiting[data-state="live"] #waiting-status { color: var(--good); font-weight: 600; }
`;
