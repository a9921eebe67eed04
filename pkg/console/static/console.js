// Trawler console: refreshes the overview's numbers and a command's
// acknowledgement by polling the console's JSON, and draws the rate
// sparklines. Plain DOM, no library, no inline script (the page's
// Content-Security-Policy allows only this file).
"use strict";

(function () {
  var pollMs = 2000;
  var sparkPoints = 60;

  function get(obj, path) {
    return path.split(".").reduce(function (o, k) { return o == null ? undefined : o[k]; }, obj);
  }

  function bytes(n) {
    var units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    var i = 0;
    while (Math.abs(n) >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (i === 0 ? Math.round(n) : n.toFixed(1)) + " " + units[i];
  }

  function count(n) { return Math.round(n).toLocaleString("en-GB"); }

  function format(v, fmt) {
    if (v === undefined || v === null) { return "–"; }
    switch (fmt) {
      case "bytes": return bytes(v);
      case "count": return count(v);
      case "length": return String(v.length);
      case "paused": return v ? "The crawl is paused." : "The crawl is running.";
    }
    return String(v);
  }

  function drawSpark(svg, values) {
    while (svg.firstChild) { svg.removeChild(svg.firstChild); }
    if (values.length < 2) { return; }
    var max = Math.max.apply(null, values.concat([1e-9]));
    // Few points spread over the width; a full series scrolls.
    var step = 120 / (values.length - 1);
    var x0 = 0;
    var pts = values.map(function (v, i) {
      return (x0 + i * step).toFixed(1) + "," + (29 - 27 * v / max).toFixed(1);
    }).join(" ");
    var line = document.createElementNS("http://www.w3.org/2000/svg", "polyline");
    line.setAttribute("points", pts);
    svg.appendChild(line);
  }

  function poll(url, onData) {
    var timer = null;
    function tick() {
      fetch(url, { credentials: "same-origin", cache: "no-store" }).then(function (r) {
        if (r.status === 401) { window.location.assign("/console/login"); return null; }
        if (!r.ok) { throw new Error("HTTP " + r.status); }
        return r.json();
      }).then(function (data) {
        if (data === null) { return; }
        document.body.classList.remove("stale");
        if (onData(data) !== false) { timer = setTimeout(tick, pollMs); }
      }).catch(function () {
        // The process may be restarting: mark the numbers stale and retry.
        document.body.classList.add("stale");
        timer = setTimeout(tick, pollMs * 2);
      });
    }
    timer = setTimeout(tick, pollMs);
    return function () { clearTimeout(timer); };
  }

  // row builds a table row of text cells; link (optional) makes the
  // first cell a link. Text only: host names are crawled input.
  function row(cells, link) {
    var tr = document.createElement("tr");
    cells.forEach(function (c, i) {
      var td = document.createElement("td");
      if (i > 0) { td.className = "num"; }
      if (i === 0 && link) {
        var a = document.createElement("a");
        a.href = link;
        a.textContent = c;
        td.appendChild(a);
      } else {
        td.textContent = c;
      }
      tr.appendChild(td);
    });
    return tr;
  }

  function fillRows(id, rows) {
    var body = document.getElementById(id);
    if (!body) { return; }
    while (body.firstChild) { body.removeChild(body.firstChild); }
    rows.forEach(function (r) { body.appendChild(r); });
  }

  function tables(st) {
    if (!st) { return; }
    fillRows("top-hosts-rows", (st.top_hosts || []).map(function (h) {
      return row([h.host, count(h.queued)], "/console/hosts?name=" + encodeURIComponent(h.host));
    }));
    var codes = Object.keys(st.totals.by_status || {}).sort();
    fillRows("by-status-rows", codes.map(function (c) { return row([c, count(st.totals.by_status[c])]); }));
  }

  function backOffs(list) {
    var notice = document.getElementById("backing-off-notice");
    var ul = document.getElementById("backing-off-list");
    if (!notice || !ul) { return; }
    while (ul.firstChild) { ul.removeChild(ul.firstChild); }
    (list || []).forEach(function (b) {
      var li = document.createElement("li");
      var a = document.createElement("a");
      a.href = "/console/host?h=" + encodeURIComponent(b.host);
      a.textContent = b.host;
      li.appendChild(a);
      li.appendChild(document.createTextNode(" " + (b.reason === "challenge" ? "challenge pages" : "status " + b.status) + ", " + b.in_a_row + " in a row, until " + b.until));
      ul.appendChild(li);
    });
    notice.hidden = !list || list.length === 0;
  }

  function overview() {
    var last = null;
    var series = {};
    poll("/console/live.json", function (data) {
      var at = Date.parse(data.at);
      document.querySelectorAll("[data-live]").forEach(function (el) {
        var path = el.getAttribute("data-live");
        var v = path === "at" ? new Date(at).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z") : get(data, path);
        el.textContent = format(v, el.getAttribute("data-fmt"));
        if (path === "status.paused") { el.classList.toggle("warn", !!v); }
      });
      document.querySelectorAll("[data-rate]").forEach(function (el) {
        var path = el.getAttribute("data-rate");
        var v = get(data, path);
        if (last && v !== undefined && at > last.at) {
          var rate = Math.max(0, (v - get(last.data, path)) / ((at - last.at) / 1000));
          el.textContent = el.getAttribute("data-fmt") === "bytes" ? bytes(rate) : rate.toFixed(1);
          var s = series[path] = (series[path] || []).concat([rate]).slice(-sparkPoints);
          document.querySelectorAll('[data-spark="' + path + '"]').forEach(function (svg) { drawSpark(svg, s); });
        }
      });
      tables(data.status);
      backOffs(data.backing_off);
      last = { at: at, data: data };
    });
  }

  function ack(el) {
    var id = el.getAttribute("data-ack-id");
    var state = document.getElementById("ack-state");
    if (state && state.textContent.indexOf("acknowledged") === 0) { return; }
    poll("/console/ack.json?id=" + encodeURIComponent(id), function (data) {
      var a = data.Ack;
      if (!a) { return true; }
      var text = "acknowledged by worker " + a.worker + " at " + a.applied_at + ": " + a.result;
      if (a.error) { text += " · error: " + a.error; }
      if (a.by) { text += " · by " + a.by; }
      state.textContent = text;
      state.classList.toggle("warn", !!a.error);
      return false;
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    if (document.getElementById("numbers")) { overview(); }
    var a = document.getElementById("ack");
    if (a) { ack(a); }
  });
})();
