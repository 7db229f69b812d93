//===- CompareReport.cpp - `kiln compare --html` ---------------------------===//

#include "CompareReport.h"

#include "llvm/Support/raw_ostream.h"

namespace kiln::cli {

namespace {

// The page: styles, the three panels and the script that draws them from the embedded data.
// When the script has drawn everything it sets data-drawn on <body> to the number of points it
// plotted; any script error is recorded in data-errors (what the browser test reads).
const char *const kHead = R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>kiln compare</title>
<style>
body{font:14px system-ui,sans-serif;margin:24px;color:#1b1b1b;background:#fff}
h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:24px 0 8px}
.meta{color:#555} svg{background:#fafafa;border:1px solid #ddd}
table{border-collapse:collapse;margin-top:8px} th,td{padding:3px 8px;border-bottom:1px solid #eee;text-align:right}
th{cursor:pointer;background:#f0f0f0;position:sticky;top:0} td:first-child,th:first-child,td.text{text-align:left}
tr.culprit td{background:#fde8e8} .legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}
</style></head>
<body data-drawn="0" data-bars="0" data-errors="">
<h1>kiln compare</h1><div class="meta" id="sides"></div>
<h2>Relative error along the graph (log scale; culprits in red)</h2><svg id="errors" width="1100" height="320"></svg>
<h2>Step time per value, A and B</h2><div class="meta" id="timeNote"></div><div class="legend" id="timeLegend"></div>
<svg id="times" width="1100" height="260"></svg>
<h2>Precision of B per value</h2><div class="legend" id="legend"></div><svg id="precision" width="1100" height="40"></svg>
<h2>Values</h2><div class="meta">Click a column to sort. Only in A: <span id="onlyA"></span>. Only in B: <span id="onlyB"></span>.</div>
<table id="table"><thead></thead><tbody></tbody></table>
<script type="application/json" id="data">)";

const char *const kTail = R"(</script>
<script>
window.addEventListener('error', e => { document.body.dataset.errors += (e.message || 'error') + ';'; });
(function () {
  const data = JSON.parse(document.getElementById('data').textContent);
  const NS = 'http://www.w3.org/2000/svg';
  const el = (tag, attrs, parent) => {
    const e = document.createElementNS(NS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  };
  const side = s => `${s.dir} (${s.source}, ${s.precision})`;
  document.getElementById('sides').textContent =
    `A ${side(data.a)}  vs  B ${side(data.b)}; model ${data.a.model}; ${data.values.length} values compared`;
  document.getElementById('onlyA').textContent = data.only_a.join(', ') || 'none';
  document.getElementById('onlyB').textContent = data.only_b.join(', ') || 'none';
  const culprits = new Set(data.culprits);
  const values = data.values;
  let drawn = 0;

  // Error along the graph: log10 of max_rel per value, in A's order.
  const svg = document.getElementById('errors');
  const W = +svg.getAttribute('width'), H = +svg.getAttribute('height'), L = 60, R = 20, T = 16, B = 40;
  const measured = values.filter(v => typeof v.max_rel === 'number');
  const logs = measured.map(v => Math.log10(Math.max(v.max_rel, 1e-12)));
  const lo = Math.floor(Math.min(-8, ...logs)), hi = Math.ceil(Math.max(0, ...logs));
  const x = i => L + (values.length > 1 ? i * (W - L - R) / (values.length - 1) : (W - L - R) / 2);
  const y = l => T + (hi - l) * (H - T - B) / (hi - lo || 1);
  for (let d = lo; d <= hi; d++) {
    el('line', {x1: L, x2: W - R, y1: y(d), y2: y(d), stroke: '#e4e4e4'}, svg);
    el('text', {x: L - 6, y: y(d) + 4, 'text-anchor': 'end', 'font-size': 11, fill: '#666'}, svg).textContent = `1e${d}`;
  }
  let path = '';
  values.forEach((v, i) => {
    if (typeof v.max_rel !== 'number') return;
    const l = Math.log10(Math.max(v.max_rel, 1e-12));
    path += (path ? 'L' : 'M') + x(i).toFixed(1) + ',' + y(l).toFixed(1);
  });
  if (path) el('path', {d: path, fill: 'none', stroke: '#3a6fb0', 'stroke-width': 1.5}, svg);
  values.forEach((v, i) => {
    if (typeof v.max_rel !== 'number') return;
    const l = Math.log10(Math.max(v.max_rel, 1e-12)), bad = culprits.has(v.name);
    const dot = el('circle', {cx: x(i), cy: y(l), r: bad ? 5 : 3, fill: bad ? '#d62728' : '#3a6fb0', class: 'point'}, svg);
    el('title', {}, dot).textContent = `${v.name}: max rel ${v.max_rel.toExponential(3)}, growth ${v.growth.toExponential(2)}`;
    if (bad) {  // labels near the right edge run leftwards
      const right = x(i) > W * 0.8;
      el('text', {x: x(i) + (right ? -6 : 6), y: y(l) - 6, 'font-size': 11, fill: '#d62728',
                  'text-anchor': right ? 'end' : 'start'}, svg).textContent = v.name;
    }
    drawn++;
  });
  el('text', {x: L, y: H - 10, 'font-size': 11, fill: '#666'}, svg).textContent = 'values in graph order (A) \u2192';

  // Step times (GPU dumps): per value, the steps after the previous value's up to the one that
  // completed it (ms_a, ms_b, which add up to all steps), A and B side by side on one scale.
  const msA = values.map(v => v.ms_a || 0), msB = values.map(v => v.ms_b || 0);
  values.forEach(v => { v.runner_b = v.step_b ? v.step_b.runner : ''; v.algorithm_b = v.step_b ? v.step_b.algorithm : ''; });
  const times = document.getElementById('times');
  const note = document.getElementById('timeNote');
  let bars = 0;
  if (values.some(v => v.step_a || v.step_b)) {
    const TH = +times.getAttribute('height'), top = Math.max(...msA, ...msB, 1e-6);
    const ty = ms => T + (1 - ms / top) * (TH - T - B);
    for (const f of [0, 0.5, 1]) {
      el('line', {x1: L, x2: W - R, y1: ty(top * f), y2: ty(top * f), stroke: '#e4e4e4'}, times);
      el('text', {x: L - 6, y: ty(top * f) + 4, 'text-anchor': 'end', 'font-size': 11, fill: '#666'}, times)
        .textContent = (top * f).toFixed(3);
    }
    const slot = (W - L - R) / Math.max(values.length, 1), bw = Math.max(slot / 2 - 0.5, 0.5);
    const tcolors = {a: '#7f7f7f', b: '#e07b1a'};
    values.forEach((v, i) => {
      [['a', msA[i]], ['b', msB[i]]].forEach(([side, ms], k) => {
        if (!ms) return;
        const r = el('rect', {x: L + i * slot + k * bw, y: ty(ms), width: bw, height: Math.max(TH - B - ty(ms), 0.5),
                              fill: tcolors[side], class: 'bar'}, times);
        const s = v['step_' + side];
        el('title', {}, r).textContent = `${v.name} (${side.toUpperCase()}): ${ms.toFixed(4)} ms up to step ${s.index}, ` +
                                         `${s.runner} ${s.algorithm || ''}`;
        bars++;
      });
    });
    el('text', {x: L, y: TH - 10, 'font-size': 11, fill: '#666'}, times).textContent = 'ms per value, graph order (A) \u2192';
    const legendT = document.getElementById('timeLegend');
    for (const [side, label] of [['a', 'A'], ['b', 'B']]) {
      const sw = document.createElement('span'); sw.style.background = tcolors[side];
      legendT.appendChild(sw); legendT.appendChild(document.createTextNode(label));
    }
    const total = data.steps_ms || {};
    note.textContent = `every step timed alone; a value's bar is the steps after the previous value's, up to the one that ` +
                       `completed it; all steps: A ${total.a !== undefined ? total.a.toFixed(3) + ' ms' : '-'}, ` +
                       `B ${total.b !== undefined ? total.b.toFixed(3) + ' ms' : '-'}`;
  } else {
    times.style.display = 'none';
    note.textContent = 'no step times: both sides are interpreter dumps (kiln run --dump records them)';
  }
  document.body.dataset.bars = String(bars);

  // Precision map: one cell per value, colored by B's element type.
  const colors = {f32: '#3a6fb0', bf16: '#e07b1a', f16: '#2ca02c'};
  const map = document.getElementById('precision');
  const cell = (W - L - R) / Math.max(values.length, 1);
  values.forEach((v, i) => {
    const r = el('rect', {x: L + i * cell, y: 8, width: Math.max(cell - 1, 1), height: 24, fill: colors[v.dtype_b] || '#999'}, map);
    el('title', {}, r).textContent = `${v.name}: ${v.dtype_a} \u2192 ${v.dtype_b}`;
  });
  const legend = document.getElementById('legend');
  for (const t of [...new Set(values.map(v => v.dtype_b))]) {
    const s = document.createElement('span'); s.style.background = colors[t] || '#999';
    legend.appendChild(s); legend.appendChild(document.createTextNode(t));
  }

  // The sortable table.
  const columns = [['name', 'value'], ['nodes', 'nodes'], ['op_b', 'op (B)'], ['dtype_a', 'type A'], ['dtype_b', 'type B'],
                   ['max_abs', 'max abs'], ['max_rel', 'max rel'], ['cosine', 'cosine'], ['growth', 'growth'],
                   ['ms_a', 'ms A'], ['ms_b', 'ms B'], ['runner_b', 'runner B'], ['algorithm_b', 'algorithm B']];
  const head = document.querySelector('#table thead'), body = document.querySelector('#table tbody');
  const tr = document.createElement('tr'); head.appendChild(tr);
  let sortKey = null, ascending = true;
  const fmt = v => typeof v === 'number' ? (Math.abs(v) < 1e-3 || Math.abs(v) >= 1e4 ? v.toExponential(3) : v.toFixed(6))
                 : Array.isArray(v) ? v.join(', ') : (v ?? '');
  const render = () => {
    body.textContent = '';
    const rows = values.slice();
    if (sortKey) rows.sort((p, q) => { const a = p[sortKey] ?? -Infinity, b = q[sortKey] ?? -Infinity;
                                       return (a < b ? -1 : a > b ? 1 : 0) * (ascending ? 1 : -1); });
    for (const v of rows) {
      const row = document.createElement('tr'); if (culprits.has(v.name)) row.className = 'culprit';
      for (const [key] of columns) {
        const td = document.createElement('td'); td.textContent = v.problem && key.startsWith('max') ? v.problem : fmt(v[key]);
        if (typeof v[key] !== 'number') td.className = 'text';
        row.appendChild(td);
      }
      body.appendChild(row);
    }
  };
  for (const [key, label] of columns) {
    const th = document.createElement('th'); th.textContent = label;
    th.addEventListener('click', () => { ascending = sortKey === key ? !ascending : false; sortKey = key; render(); });
    tr.appendChild(th);
  }
  render();
  document.body.dataset.drawn = String(drawn);
})();
</script>
</body></html>
)";

} // namespace

llvm::Error writeCompareReport(const std::string &path, const llvm::json::Value &comparison) {
  std::string data;
  llvm::raw_string_ostream os(data);
  os << comparison;
  // Inside <script>, "</" could end the element early: JSON allows "<\/" for it.
  std::string escaped;
  for (size_t i = 0; i < data.size(); ++i) {
    escaped += data[i];
    if (data[i] == '<' && i + 1 < data.size() && data[i + 1] == '/')
      escaped += '\\';
  }
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec);
  if (ec)
    return llvm::createStringError(ec, "cannot write '" + path + "': " + ec.message());
  out << kHead << escaped << kTail;
  return llvm::Error::success();
}

} // namespace kiln::cli
