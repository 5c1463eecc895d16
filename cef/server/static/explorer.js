/* The cef explorer page: ask a question, see the ranked chunks and the subgraph behind them.
 * Only read routes are called (GET, and POST /api/v1/explore which reads); the API key, when the
 * server needs one, is kept in sessionStorage and sent in the X-API-Key header. While /health says
 * "starting" the page shows "starting…", keeps the query box disabled and asks again with backoff.
 */
(function () {
  "use strict";

  var API = "/api/v1";
  var KEY_HEADER = "X-API-Key";
  var KEY_STORE = "cef.explorer.key";
  var state = { graph: null, auth: false, ready: false, retries: 0, key: sessionStorage.getItem(KEY_STORE) || "" };
  window.cefExplorer = state; // for tests and the browser console

  function $(id) { return document.getElementById(id); }

  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") e.textContent = attrs[k];
      else if (k === "class") e.className = attrs[k];
      else if (k === "onclick") e.addEventListener("click", attrs[k]);
      else e.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) {
      if (c !== null && c !== undefined) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return e;
  }

  function status(message, kind) {
    var s = $("status");
    s.textContent = message || "";
    s.className = message ? kind || "info" : "";
    s.setAttribute("role", kind === "error" ? "alert" : "status");
  }

  // ------------------------------------------------------------------ HTTP
  function ApiError(status, kind, message) {
    this.status = status;
    this.kind = kind;
    this.message = message;
  }

  function explain(err) {
    if (!(err instanceof ApiError)) return "Cannot reach the cef server: " + err;
    if (err.status === 401) {
      return state.key
        ? "The server refused the API key (" + err.message + "). Enter a valid key with read scope above."
        : "This server needs an API key with read scope: enter it above (" + err.message + ").";
    }
    if (err.status === 403) return "The API key is not allowed to do this: " + err.message;
    return "Error " + err.status + " (" + err.kind + "): " + err.message;
  }

  function call(method, path, body) {
    var headers = { Accept: "application/json" };
    if (state.key) headers[KEY_HEADER] = state.key;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    return fetch(path, { method: method, headers: headers, body: body === undefined ? undefined : JSON.stringify(body) })
      .then(function (r) {
        return r.text().then(function (text) {
          var data = null;
          try { data = text ? JSON.parse(text) : null; } catch (e) { data = null; }
          if (!r.ok) {
            var kind = data && data.error ? data.error : "http_error";
            var message = data && data.message ? data.message : (text || r.statusText);
            throw new ApiError(r.status, kind, message);
          }
          return data;
        });
      });
  }

  function fail(err) {
    status(explain(err), "error");
    return null;
  }

  // ------------------------------------------------------------------ schema
  function showSchema(schema) {
    var box = $("schema-body");
    box.className = "";
    box.innerHTML = "";
    var types = el("table", { class: "schema-table" }, [
      el("tr", {}, [el("th", { text: "Node type" }), el("th", { text: "Count" })])
    ]);
    schema.node_types.forEach(function (t) {
      types.appendChild(el("tr", { title: "properties: " + t.properties.join(", ") }, [
        el("td", { text: t.label }), el("td", { text: String(t.count) })
      ]));
    });
    var rels = el("table", { class: "schema-table" }, [
      el("tr", {}, [el("th", { text: "Relation" }), el("th", { text: "Meaning" })])
    ]);
    schema.relation_types.forEach(function (r) {
      var ends = r.endpoints.slice(0, 2).map(function (e) { return e.source + "\u2192" + e.target; }).join(", ");
      rels.appendChild(el("tr", {}, [
        el("td", {}, [el("div", { text: r.name }), el("span", { class: "sem", text: r.semantics + (r.bidirectional ? " \u2194" : "") })]),
        el("td", {}, [r.description || "", el("div", { class: "muted", text: ends + (r.count ? " (" + r.count + ")" : "") })])
      ]));
    });
    box.appendChild(el("h3", { text: "Node types" }));
    box.appendChild(types);
    box.appendChild(el("h3", { text: "Relation types" }));
    box.appendChild(rels);
  }

  function loadSchema() {
    return call("GET", API + "/schema").then(showSchema);
  }

  // ------------------------------------------------------------------ graph
  function drawGraph(view) {
    var box = $("graph");
    if (state.graph) { state.graph.cy.destroy(); state.graph = null; }
    box.innerHTML = "";
    state.graph = CefGraph.draw(box, view, { onSelect: function (n) { showNode(n); } });
    state.cy = state.graph.cy;
    summarise();
  }

  function summarise() {
    var cy = state.graph.cy;
    $("graph-summary").textContent = cy.nodes().length + " nodes, " + cy.edges().length + " edges";
  }

  // ------------------------------------------------------------------ results
  function fmt(x) { return x === null || x === undefined ? null : Number(x).toFixed(3); }

  function describePath(p) {
    if (!p || !p.relation_types || !p.relation_types.length) return null;
    var names = p.node_names && p.node_names.length ? p.node_names : p.node_ids;
    var parts = [names[0]];
    for (var i = 0; i < p.relation_types.length; i++) {
      var back = p.reversed && p.reversed[i];
      parts.push(back ? "<-[" + p.relation_types[i] + "]- " + names[i + 1] : "-[" + p.relation_types[i] + "]-> " + names[i + 1]);
    }
    return parts.join(" ");
  }

  function showResults(data) {
    var r = data.result;
    $("result-meta").textContent = "strategy " + r.strategy +
      (r.fallbacks && r.fallbacks.length ? " (after: " + r.fallbacks.join("; ") + ")" : "") +
      " \u00b7 " + r.results.length + " chunk(s) \u00b7 " + r.duration_ms.toFixed(1) + " ms" +
      (r.metadata && r.metadata.cached ? " \u00b7 cached" : "");
    var answers = $("answers");
    answers.innerHTML = "";
    if (r.nodes && r.nodes.length) {
      answers.appendChild(el("h3", { text: "Answer nodes" }));
      r.nodes.forEach(function (a, i) {
        var path = describePath(a.path);
        answers.appendChild(el("div", { class: "answer" }, [
          el("div", {}, [
            el("button", { class: "linkish", text: (i + 1) + ". " + (a.node.properties.name || a.node.id), onclick: function () { focusNode(a.node.id); } }),
            " ", el("span", { class: "muted", text: a.node.label + " \u00b7 score " + fmt(a.score) + " \u00b7 " + a.strategy })
          ]),
          path ? el("div", { class: "path", text: path }) : null,
          a.text ? el("div", { class: "why", text: a.text }) : null
        ]));
      });
    }
    var list = $("results");
    list.innerHTML = "";
    r.results.forEach(function (hit) {
      var e = hit.explanation;
      var scores = [];
      if (e.vector_score !== null && e.vector_score !== undefined) scores.push("vector " + fmt(e.vector_score));
      if (e.bm25_score !== null && e.bm25_score !== undefined) scores.push("bm25 " + fmt(e.bm25_score));
      if (e.graph_score !== null && e.graph_score !== undefined) scores.push("graph " + fmt(e.graph_score));
      var path = describePath(e.path);
      list.appendChild(el("li", { "data-chunk": hit.chunk.id }, [
        el("div", { class: "hit-head" }, [
          el("button", { class: "linkish", text: hit.chunk.id, onclick: function () { focusNode(hit.chunk.id); } }),
          " score " + fmt(hit.score) + " (" + e.strategy + (scores.length ? ": " + scores.join(", ") : "") + ")"
        ]),
        el("div", { class: "hit-text", text: hit.chunk.content }),
        path ? el("div", { class: "path", text: path }) : null
      ].concat((e.notes || []).map(function (n) { return el("div", { class: "why", text: "why: " + n }); }))));
    });
    if (!r.results.length) list.appendChild(el("li", { class: "muted", text: "no results" }));
    tab("results");
  }

  function focusNode(id) {
    if (!state.graph) return;
    var n = state.graph.select(id);
    if (n.nonempty()) {
      state.graph.cy.animate({ center: { eles: n } }, { duration: 200 });
      showNode(n.data("record"));
    }
  }

  // ------------------------------------------------------------------ node panel
  function propsTable(obj) {
    var t = el("table", { class: "props" });
    Object.keys(obj).forEach(function (k) {
      var v = obj[k];
      t.appendChild(el("tr", {}, [el("th", { text: k }), el("td", { text: typeof v === "string" ? v : JSON.stringify(v) })]));
    });
    return t;
  }

  function showNode(rec) {
    tab("node");
    var panel = $("node-panel");
    panel.className = "";
    panel.innerHTML = "";
    panel.appendChild(el("h2", { id: "node-title", text: rec.name }));
    panel.appendChild(el("div", { class: "muted", text: rec.label + " \u00b7 " + rec.id + " \u00b7 " + (rec.roles || []).join(", ") }));
    if (rec.label === "Chunk") {
      panel.appendChild(el("div", { class: "chunk-text", text: rec.text || rec.name }));
      if (Object.keys(rec.properties || {}).length) {
        panel.appendChild(el("h3", { text: "Metadata" }));
        panel.appendChild(propsTable(rec.properties));
      }
      return;
    }
    if (rec.text) panel.appendChild(el("div", { class: "why", text: rec.text }));
    var props = el("div", { id: "node-properties" }, [el("span", { class: "muted", text: "loading\u2026" })]);
    var chunks = el("div", { id: "node-chunks" });
    var neigh = el("div", { id: "node-neighbours" });
    panel.appendChild(el("h3", { text: "Properties" }));
    panel.appendChild(props);
    panel.appendChild(el("button", { type: "button", id: "expand", text: "Expand neighbours in the graph", onclick: function () { expand(rec.id); } }));
    panel.appendChild(el("h3", { text: "Neighbours" }));
    panel.appendChild(neigh);
    panel.appendChild(el("h3", { text: "Chunks" }));
    panel.appendChild(chunks);
    var id = encodeURIComponent(rec.id);
    call("GET", API + "/nodes/" + id).then(function (node) {
      props.innerHTML = "";
      props.appendChild(propsTable(Object.assign({ id: node.id, label: node.label }, node.properties, node.content ? { content: node.content } : {})));
    }).catch(function (err) { props.textContent = explain(err); });
    call("GET", API + "/nodes/" + id + "/neighbors?depth=1&limit=50").then(function (view) {
      neigh.innerHTML = "";
      var byId = {};
      view.nodes.forEach(function (n) { byId[n.id] = n; });
      view.edges.forEach(function (e) {
        var other = e.source === rec.id ? e.target : e.source;
        var n = byId[other];
        if (!n) return;
        neigh.appendChild(el("div", { class: "neighbour" }, [
          el("span", {}, [e.source === rec.id ? "-[" + e.relation + "]-> " : "<-[" + e.relation + "]- ",
            el("button", { class: "linkish", text: n.name, onclick: function () { expandAndFocus(rec.id, n.id); } })]),
          el("span", { class: "muted", text: n.label })
        ]));
      });
      if (!view.edges.length) neigh.appendChild(el("span", { class: "muted", text: "no neighbours" }));
    }).catch(function (err) { neigh.textContent = explain(err); });
    call("GET", API + "/nodes/" + id + "/chunks?limit=10").then(function (list) {
      chunks.innerHTML = "";
      list.forEach(function (c) { chunks.appendChild(el("div", { class: "chunk-text", title: c.id, text: c.content })); });
      if (!list.length) chunks.appendChild(el("span", { class: "muted", text: "no chunks" }));
    }).catch(function (err) { chunks.textContent = explain(err); });
  }

  function expand(nodeId) {
    return call("GET", API + "/nodes/" + encodeURIComponent(nodeId) + "/neighbors?depth=1&limit=50").then(function (view) {
      if (!state.graph) drawGraph(view);
      else {
        var added = state.graph.merge(view);
        status(added ? "added " + added + " element(s) around " + nodeId : "nothing new around " + nodeId, "info");
        summarise();
      }
      return view;
    }).catch(fail);
  }

  function expandAndFocus(from, to) {
    expand(from).then(function (view) { if (view) focusNode(to); });
  }

  function tab(name) {
    document.querySelectorAll("#tabs button").forEach(function (b) { b.classList.toggle("active", b.dataset.tab === name); });
    document.querySelectorAll(".tab").forEach(function (t) { t.classList.toggle("active", t.id === "tab-" + name); });
  }

  // ------------------------------------------------------------------ query
  function buildQuery() {
    var q = {
      query: $("q").value.trim(),
      strategy: $("strategy").value,
      top_k: parseInt($("top-k").value, 10) || 8,
      traversal: { depth: parseInt($("depth").value, 10) || 0 }
    };
    q.min_results = Math.min(3, q.top_k);
    var asOf = $("as-of").value;
    if (asOf) q.as_of = new Date(asOf).toISOString();
    var budget = parseInt($("budget").value, 10);
    if (budget > 0) q.max_token_budget = budget;
    return q;
  }

  function search(ev) {
    if (ev) ev.preventDefault();
    var q = buildQuery();
    if (!state.ready) { status("starting\u2026 wait until the server is ready.", "info"); return; }
    if (!q.query) { status("Type a question first.", "error"); return; }
    status("searching\u2026", "info");
    return call("POST", API + "/explore", q).then(function (data) {
      drawGraph(data.graph);
      showResults(data);
      var notes = (data.result.metadata && data.result.metadata.notes) || [];
      status(data.graph.nodes.length + " nodes and " + data.graph.edges.length + " edges behind " +
        data.result.results.length + " chunk(s)" + (notes.length ? " \u00b7 " + notes.join("; ") : ""), "info");
    }).catch(fail);
  }

  // ------------------------------------------------------------------ start
  function start() {
    setUsable(false);
    CefGraph.legend($("legend"));
    $("api-key").value = state.key;
    $("query-form").addEventListener("submit", search);
    $("key-form").addEventListener("submit", function (ev) {
      ev.preventDefault();
      state.key = $("api-key").value.trim();
      if (state.key) sessionStorage.setItem(KEY_STORE, state.key); else sessionStorage.removeItem(KEY_STORE);
      status("checking the key\u2026", "info");
      loadSchema().then(function () { status("API key accepted.", "info"); }).catch(fail);
    });
    $("key-forget").addEventListener("click", function () {
      state.key = "";
      $("api-key").value = "";
      sessionStorage.removeItem(KEY_STORE);
      status("API key forgotten.", "info");
    });
    $("fit").addEventListener("click", function () { if (state.graph) state.graph.fit(); });
    $("relayout").addEventListener("click", function () { if (state.graph) state.graph.relayout(); });
    document.querySelectorAll("#tabs button").forEach(function (b) {
      b.addEventListener("click", function () { tab(b.dataset.tab); });
    });
    waitUntilReady(0);
  }

  // ------------------------------------------------------------------ readiness
  // While the server loads its models and indexes, /health answers 503 {"status": "starting"}: the page
  // says so, keeps the query box disabled and asks again with a growing delay, until "ready".
  var RETRY_FIRST_MS = 250;
  var RETRY_MAX_MS = 5000;

  function setUsable(usable) {
    state.ready = usable;
    ["q", "search"].forEach(function (id) { $(id).disabled = !usable; });
  }

  function waitUntilReady(attempt) {
    var delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * Math.pow(2, attempt));
    fetch("/health", { headers: { Accept: "application/json" } }).then(function (r) {
      return r.json().catch(function () { return null; }).then(function (h) {
        if (r.ok && h && h.status === "ready") return ready(h);
        if (r.status === 503 && h && h.status === "starting") {
          state.retries = attempt + 1;
          status("starting\u2026 the server is loading its models and indexes (asking again in " +
            (delay / 1000).toFixed(1) + " s)", "info");
          setTimeout(function () { waitUntilReady(attempt + 1); }, delay);
          return;
        }
        status("The server's /health answered " + r.status + ": " + (h && h.message ? h.message : r.statusText), "error");
      });
    }).catch(function (err) {
      state.retries = attempt + 1;
      status("Cannot reach the cef server (" + err + "); trying again in " + (delay / 1000).toFixed(1) + " s", "error");
      setTimeout(function () { waitUntilReady(attempt + 1); }, delay);
    });
  }

  function ready(h) {
    state.auth = h.auth;
    setUsable(true);
    $("server-info").textContent = "cef " + h.version + (h.auth ? " \u00b7 API keys required" : " \u00b7 open (no API keys)");
    if (h.auth && !state.key) {
      status("This server needs an API key with read scope: enter it above.", "info");
      return;
    }
    status("", "");
    return loadSchema().catch(fail);
  }

  state.search = search;
  state.expand = expand;
  start();
})();
