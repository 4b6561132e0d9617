// kgb report: sort any table by a click on its header; filter the tables that ask for it
// (data-filter names the columns that get a drop-down; a text box matches the whole row).
// Inline in the report, no network, no library. Cells may carry data-v, their raw value.
(function () {
  "use strict";
  var MISSING = { "": 1, "-": 1, "n/a": 1 };

  function key(cell) {
    var raw = cell.getAttribute("data-v");
    var text = (raw !== null ? raw : cell.textContent).trim();
    var number = Number(text);
    return text !== "" && isFinite(number) ? number : text.toLowerCase();
  }

  function missing(value) {
    return typeof value === "string" && MISSING.hasOwnProperty(value);
  }

  function compare(a, b) {
    if (typeof a === "number" && typeof b === "number") return a - b;
    if (typeof a === "number") return -1;
    if (typeof b === "number") return 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }

  function sortBy(table, column) {
    var header = table.tHead.rows[0].cells[column];
    var descending = header.getAttribute("aria-sort") === "ascending";
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (r1, r2) {
      var a = key(r1.cells[column]), b = key(r2.cells[column]);
      if (missing(a) || missing(b)) return missing(a) - missing(b);  // missing last, always
      return descending ? compare(b, a) : compare(a, b);
    });
    rows.forEach(function (row) { body.appendChild(row); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (cell) {
      cell.removeAttribute("aria-sort");
    });
    header.setAttribute("aria-sort", descending ? "descending" : "ascending");
  }

  // A verdicts cell reads "pass x2, wrong_output": its values are the verdicts named.
  function values(text) {
    return text.split(",").map(function (part) {
      return part.trim().replace(/ x\d+$/, "");
    }).filter(function (part) { return part !== ""; });
  }

  function addFilters(table) {
    var names = Array.prototype.map.call(table.tHead.rows[0].cells, function (cell) {
      return cell.textContent.trim();
    });
    var bar = document.createElement("div");
    bar.className = "filters";
    var text = document.createElement("input");
    text.type = "search";
    text.placeholder = "filter rows";
    text.className = "filter-text";
    bar.appendChild(text);
    var selects = [];
    table.getAttribute("data-filter").split(",").forEach(function (name) {
      var column = names.indexOf(name);
      if (column < 0) return;
      var seen = {};
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        values(row.cells[column].textContent).forEach(function (v) { seen[v] = 1; });
      });
      var select = document.createElement("select");
      select.setAttribute("data-column", name);
      select.add(new Option("every " + name, ""));
      Object.keys(seen).sort().forEach(function (v) { select.add(new Option(v, v)); });
      select.addEventListener("change", apply);
      bar.appendChild(select);
      selects.push({ select: select, column: column });
    });
    var count = document.createElement("span");
    count.className = "filter-count";
    bar.appendChild(count);
    table.parentNode.insertBefore(bar, table);
    text.addEventListener("input", apply);

    function apply() {
      var wanted = text.value.trim().toLowerCase();
      var shown = 0, rows = table.tBodies[0].rows;
      Array.prototype.forEach.call(rows, function (row) {
        var ok = wanted === "" || row.textContent.toLowerCase().indexOf(wanted) >= 0;
        selects.forEach(function (s) {
          if (ok && s.select.value !== "") {
            ok = values(row.cells[s.column].textContent).indexOf(s.select.value) >= 0;
          }
        });
        row.hidden = !ok;
        shown += ok ? 1 : 0;
      });
      count.textContent = shown + " of " + rows.length + " rows";
    }
    apply();
  }

  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (cell, column) {
      cell.title = "sort by " + cell.textContent.trim();
      cell.addEventListener("click", function () { sortBy(table, column); });
    });
    if (table.hasAttribute("data-filter")) addFilters(table);
  });
})();
