/* Draws a cef GraphView ({nodes, edges, paths}) with Cytoscape.js.
 * Shared by the explorer page (cef serve http) and the files `cef graph --format html` writes.
 *
 *   const g = CefGraph.draw(element, view, {onSelect: node => ...});
 *   g.merge(otherView);   // add nodes and edges (expanding a node)
 *   g.cy                  // the Cytoscape instance
 */
(function (root) {
  "use strict";

  var ROLE_COLOURS = {
    center: "#7b3fbf",
    anchor: "#e8833a",
    answer: "#2e9d4a",
    path: "#2f6fdd",
    context: "#8795a8",
    chunk: "#d9b93a"
  };
  var ROLE_ORDER = ["center", "anchor", "answer", "chunk", "path", "context"];

  function mainRole(roles) {
    for (var i = 0; i < ROLE_ORDER.length; i++) {
      if (roles && roles.indexOf(ROLE_ORDER[i]) >= 0) return ROLE_ORDER[i];
    }
    return "context";
  }

  function shortName(name, max) {
    if (!name) return "";
    return name.length > max ? name.slice(0, max - 1) + "\u2026" : name;
  }

  function elements(view) {
    var out = [];
    (view.nodes || []).forEach(function (n) {
      var role = mainRole(n.roles);
      var isChunk = role === "chunk";
      out.push({
        group: "nodes",
        data: {
          id: n.id,
          name: n.name,
          caption: isChunk ? "#" + (n.rank || "") + " " + shortName(n.name, 28) : shortName(n.name, 32) + "\n" + n.label,
          label: n.label,
          role: role,
          roles: (n.roles || []).join(" "),
          colour: ROLE_COLOURS[role],
          size: role === "center" || role === "anchor" ? 46 : role === "answer" ? 40 : isChunk ? 22 : 30,
          record: n
        }
      });
    });
    (view.edges || []).forEach(function (e) {
      out.push({
        group: "edges",
        data: { id: "e:" + e.id, source: e.source, target: e.target, relation: e.relation, kind: e.kind, record: e }
      });
    });
    return out;
  }

  var STYLE = [
    {
      selector: "node",
      style: {
        "background-color": "data(colour)",
        label: "data(caption)",
        width: "data(size)",
        height: "data(size)",
        "font-size": 10,
        "text-wrap": "wrap",
        "text-max-width": 140,
        "text-valign": "bottom",
        "text-margin-y": 3,
        color: "#1d2430",
        "border-width": 1,
        "border-color": "#ffffff"
      }
    },
    { selector: "node[role = 'chunk']", style: { shape: "round-rectangle", "font-size": 9, color: "#6b5a12" } },
    { selector: "node[role = 'answer']", style: { "border-width": 3, "border-color": "#17632d" } },
    { selector: "node[role = 'anchor']", style: { shape: "diamond" } },
    { selector: "node[role = 'center']", style: { shape: "hexagon" } },
    { selector: "node:selected", style: { "border-width": 4, "border-color": "#d62c2c" } },
    {
      selector: "edge",
      style: {
        width: 1.6,
        "line-color": "#9aa6b6",
        "target-arrow-color": "#9aa6b6",
        "target-arrow-shape": "triangle",
        "curve-style": "bezier",
        label: "data(relation)",
        "font-size": 8,
        color: "#444d5c",
        "text-rotation": "autorotate",
        "text-background-color": "#ffffff",
        "text-background-opacity": 0.85,
        "text-background-padding": 1
      }
    },
    { selector: "edge[kind = 'link']", style: { "line-style": "dotted", "line-color": "#c3cad4", "target-arrow-color": "#c3cad4", color: "#8795a8" } },
    { selector: "edge[kind = 'chunk']", style: { "line-style": "dashed", "line-color": "#d9c36a", "target-arrow-color": "#d9c36a", label: "" } },
    { selector: "edge:selected", style: { width: 3, "line-color": "#d62c2c", "target-arrow-color": "#d62c2c" } }
  ];

  function layout(cy, animate) {
    var opts = cy.nodes().length > 1
      ? { name: "cose", animate: !!animate, randomize: false, nodeRepulsion: 9000, idealEdgeLength: 90, padding: 30, fit: true }
      : { name: "grid", fit: true, padding: 30 };
    cy.layout(opts).run();
  }

  function legend(element) {
    element.innerHTML = "";
    ROLE_ORDER.forEach(function (role) {
      var s = document.createElement("span");
      var dot = document.createElement("i");
      dot.style.background = ROLE_COLOURS[role];
      s.appendChild(dot);
      s.appendChild(document.createTextNode(role));
      element.appendChild(s);
    });
  }

  function draw(container, view, options) {
    options = options || {};
    if (typeof root.cytoscape !== "function") {
      container.textContent = "The graph library (cytoscape.min.js) did not load.";
      throw new Error("cytoscape is not loaded");
    }
    var cy = root.cytoscape({
      container: container,
      elements: elements(view),
      style: STYLE,
      wheelSensitivity: 0.3,
      minZoom: 0.1,
      maxZoom: 4
    });
    layout(cy, false);
    cy.on("tap", "node", function (evt) {
      cy.elements().unselect();
      evt.target.select();
      if (options.onSelect) options.onSelect(evt.target.data("record"));
    });
    cy.on("tap", "edge", function (evt) {
      if (options.onSelectEdge) options.onSelectEdge(evt.target.data("record"));
    });
    return {
      cy: cy,
      merge: function (more) {
        var added = cy.add(elements(more).filter(function (el) { return cy.getElementById(el.data.id).empty(); }));
        if (added.length) layout(cy, false);
        return added.length;
      },
      relayout: function () { layout(cy, false); },
      fit: function () { cy.fit(undefined, 30); },
      select: function (id) {
        var n = cy.getElementById(id);
        if (n.nonempty()) { cy.elements().unselect(); n.select(); }
        return n;
      }
    };
  }

  root.CefGraph = { draw: draw, legend: legend, colours: ROLE_COLOURS };
})(typeof window !== "undefined" ? window : this);
