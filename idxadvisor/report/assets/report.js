/* idxadvisor HTML report: draws the charts, sorts and filters the shape table, copies index commands.
 *
 * The charts' specifications and rows are the JSON in #idxadvisor-charts; a chart is drawn once, when the page opens
 * if it is visible, or when the details holding it are opened. Text from logs is never written as HTML here: it is
 * escaped in the page already, and reaches Vega only as data (SVG text, escaped tooltips).
 * A chart's figure says how far it got in data-state: drawing (queued or being drawn), drawn or failed.
 */
(function () {
  "use strict";

  const page = JSON.parse(document.getElementById("idxadvisor-charts").textContent);

  function rowsOf(chart) {
    const fields = page.fields[chart.kind];
    return chart.rows.map(function (row) {
      const datum = {};
      fields.forEach(function (name, index) { datum[name] = row[index]; });
      return datum;
    });
  }

  // Charts draw one after the other, so that the first shows at once and the page stays responsive between them.
  const queue = [];
  let drawing = false;

  function schedule(figures, first) {
    const waiting = figures.filter(function (figure) { return !figure.dataset.state; });
    waiting.forEach(function (figure) { figure.dataset.state = "drawing"; });
    if (first) queue.unshift.apply(queue, waiting); else queue.push.apply(queue, waiting);
    if (!drawing) drawNext();
  }

  function drawNext() {
    const figure = queue.shift();
    drawing = Boolean(figure);
    if (figure) draw(figure).then(function () { setTimeout(drawNext, 0); });
  }

  function draw(figure) {
    const chart = page.charts[figure.dataset.chart] || {};
    const plot = figure.querySelector(".plot");
    return Promise.resolve().then(function () {
      const spec = Object.assign({}, page.specs[chart.kind], {data: {values: rowsOf(chart)}, config: page.config});
      if (chart.height) spec.height = chart.height;
      return window.vegaEmbed(plot, spec, {renderer: "svg", actions: false});
    })
      .then(function (result) {
        result.view.addEventListener("click", function (event, item) {
          const anchor = item && item.datum && item.datum.anchor;
          if (anchor) openAnchor(anchor, true);
        });
        figure.dataset.state = "drawn";
      })
      .catch(function (error) {
        figure.dataset.state = "failed";
        plot.textContent = "This chart could not be drawn: " + error;
        console.error("idxadvisor: chart " + figure.dataset.chart + " (" + chart.kind + "): " + error);
      });
  }

  function drawVisible(root, first) {
    schedule(Array.from(root.querySelectorAll("figure.chart")).filter(function (figure) {
      return !figure.parentElement.closest("details:not([open])");
    }), first);
  }

  // toggle does not bubble: listen in the capture phase
  document.addEventListener("toggle", function (event) {
    if (event.target.open) drawVisible(event.target, true);  // what was just opened comes first
  }, true);
  window.addEventListener("beforeprint", function () { drawVisible(document, false); });

  function openAnchor(id, scroll) {
    const target = document.getElementById(id);
    if (!target) return;
    for (let node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") node.open = true;
    }
    if (scroll) {
      history.replaceState(null, "", "#" + id);
      target.scrollIntoView({block: "start"});
    }
  }

  window.addEventListener("hashchange", function () { openAnchor(decodeURIComponent(location.hash.slice(1)), false); });
  if (location.hash) openAnchor(decodeURIComponent(location.hash.slice(1)), true);

  // -- sortable tables: numbers by data-v (descending first), text by its content (ascending first) -------------------
  document.querySelectorAll("table.sortable").forEach(function (table) {
    const headers = Array.from(table.tHead.rows[0].cells);
    headers.forEach(function (header, column) {
      const button = header.querySelector("button");
      if (!button) return;
      button.addEventListener("click", function () {
        const numeric = header.dataset.type === "number";
        const current = header.getAttribute("aria-sort");
        const ascending = current ? current === "descending" : !numeric;
        const body = table.tBodies[0];
        const keyed = Array.from(body.rows).map(function (row, index) {
          const cell = row.cells[column];
          let key;
          if (numeric) {
            key = cell.dataset.v === "" || cell.dataset.v === undefined ? -Infinity : Number(cell.dataset.v);
          } else {
            key = cell.textContent.toLowerCase();
          }
          return {row: row, key: key, index: index};
        });
        keyed.sort(function (a, b) {
          const order = a.key < b.key ? -1 : a.key > b.key ? 1 : a.index - b.index;
          return ascending ? order : -order;
        });
        body.append.apply(body, keyed.map(function (item) { return item.row; }));
        headers.forEach(function (other) { other.removeAttribute("aria-sort"); });
        header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      });
    });
  });

  // -- the shape filter: every word must appear in the row (namespace, operation, shape, plan ...) ----------------
  const filter = document.getElementById("shapes-filter");
  const flaggedOnly = document.getElementById("shapes-flagged");  // with findings, or regressed
  const counter = document.getElementById("shapes-count");
  const shapeTable = document.getElementById("shapes-table");
  if (filter && shapeTable) {
    const rows = Array.from(shapeTable.tBodies[0].rows);
    const texts = new Map(rows.map(function (row) { return [row, row.textContent.toLowerCase()]; }));
    const apply = function () {
      const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
      let shown = 0;
      rows.forEach(function (row) {
        const text = texts.get(row);
        const visible = words.every(function (word) { return text.includes(word); })
          && (!flaggedOnly.checked || row.dataset.flagged !== "0");
        row.hidden = !visible;
        if (visible) shown += 1;
      });
      counter.textContent = shown.toLocaleString("en") + " of " + rows.length.toLocaleString("en") + " shapes";
    };
    filter.addEventListener("input", apply);
    flaggedOnly.addEventListener("change", apply);
  }

  // -- copy buttons ------------------------------------------------------------------------------------------------
  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    return new Promise(function (resolve, reject) {
      const area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.style.position = "fixed";
      area.style.opacity = "0";
      document.body.append(area);
      area.select();
      const copied = document.execCommand("copy");
      area.remove();
      if (copied) resolve(); else reject(new Error("the browser refused to copy"));
    });
  }

  document.addEventListener("click", function (event) {
    const button = event.target.closest("button[data-copy]");
    if (!button) return;
    const label = button.textContent;
    copyText(button.dataset.copy).then(function () {
      button.textContent = "Copied";
      button.classList.add("copied");
    }, function () {
      button.textContent = "Select the text to copy it";
    }).finally(function () {
      setTimeout(function () { button.textContent = label; button.classList.remove("copied"); }, 1500);
    });
  });

  // after the first paint: the page shows at once, its charts follow
  requestAnimationFrame(function () { setTimeout(function () { drawVisible(document, false); }, 0); });
})();
