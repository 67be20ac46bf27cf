/* Tempera memory browser: draws the charts from JSON blocks on the page (no inline script: the CSP forbids it). */
"use strict";
(function () {
  var PALETTE = ["#2f6fb3", "#d9822b", "#3a9b5c", "#b8434b", "#7b5ea7", "#8c6d3f", "#c95fa0", "#6d7a86"];

  function data(id) {
    var el = document.getElementById(id);
    return el ? JSON.parse(el.textContent) : null;
  }

  function dateLabel(ms) {
    return new Date(ms).toISOString().slice(0, 16).replace("T", " ");
  }

  var base = { animation: false, responsive: true, maintainAspectRatio: false };

  function options(extra) {
    return Object.assign({}, base, extra);
  }

  var builders = {
    sessions: function (d) {
      var starts = d.spans.map(function (s) { return s[0]; });
      var ends = d.spans.map(function (s) { return s[1]; });
      var lo = Math.min.apply(null, starts), hi = Math.max.apply(null, ends);
      var pad = Math.max((hi - lo) * 0.05, 3600 * 1000);
      return {
        type: "bar",
        data: { labels: d.labels, datasets: [{ label: "session span", data: d.spans, backgroundColor: PALETTE[0], minBarLength: 6 }] },
        options: options({
          indexAxis: "y",
          plugins: { legend: { display: false }, tooltip: { callbacks: { label: function (c) {
            return dateLabel(c.raw[0]) + " → " + dateLabel(c.raw[1]) + " (" + d.counts[c.dataIndex] + " episodes)";
          } } } },
          scales: { x: { type: "linear", beginAtZero: false, min: lo - pad, max: hi + pad,
                         ticks: { callback: function (v) { return dateLabel(v); } } } }
        })
      };
    },
    learning: function (d) {
      return {
        type: "line",
        data: { labels: d.learning.labels, datasets: [
          { label: "helpfulness", data: d.learning.helpfulness, borderColor: PALETTE[2], spanGaps: true },
          { label: "injection hit rate", data: d.learning.hit_rate, borderColor: PALETTE[1], spanGaps: true }
        ] },
        options: options({ scales: { y: { min: 0, max: 1 } } })
      };
    },
    weekly: function (d) {
      return {
        type: "bar",
        data: { labels: d.weekly.labels, datasets: d.weekly.series.map(function (s, i) {
          return { label: s.label, data: s.data, backgroundColor: PALETTE[i % PALETTE.length] };
        }) },
        options: options({ scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true } } })
      };
    },
    utility: function (d) {
      return {
        type: "bar",
        data: { labels: d.utility.labels, datasets: [{ label: "episodes", data: d.utility.counts, backgroundColor: PALETTE[4] }] },
        options: options({ plugins: { legend: { display: false } }, scales: { y: { beginAtZero: true } } })
      };
    },
    latency: function (d) {
      return {
        type: "line",
        data: { labels: d.latency.labels, datasets: [{ label: "hook latency (ms)", data: d.latency.latency_ms, borderColor: PALETTE[3] }] },
        options: options({ scales: { y: { beginAtZero: true } } })
      };
    }
  };

  document.querySelectorAll("canvas[data-chart]").forEach(function (canvas) {
    var source = data(canvas.getAttribute("data-source"));
    var build = builders[canvas.getAttribute("data-chart")];
    if (source && build && window.Chart) {
      new window.Chart(canvas, build(source));
      canvas.setAttribute("data-drawn", "1");
    }
  });

  document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
    select.addEventListener("change", function () { select.form.submit(); });
  });
})();
