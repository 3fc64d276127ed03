// The live topology page: reads the Networking API with the caller's
// credentials, draws its objects in layered columns and reads again every
// poll interval, redrawing only when something changed (no reload).
"use strict";
(function () {
  const POLL_MS = Number(document.body.dataset.pollMs) || 3000;
  const params = new URLSearchParams(location.search);
  const SOURCES = [
    ["networks", "/v2.0/networks"], ["subnets", "/v2.0/subnets"],
    ["routers", "/v2.0/routers"], ["ports", "/v2.0/ports"],
    ["floatingips", "/v2.0/floatingips"], ["security_groups", "/v2.0/security-groups"],
    ["agents", "/v2.0/agents"],
  ];
  // Columns, left to right; neighbours mostly sit in adjacent columns.
  const KINDS = ["floatingip", "router", "network", "subnet", "port", "security_group", "host", "agent"];
  const TITLES = {floatingip: "floating IPs", router: "routers", network: "networks",
    subnet: "subnets", port: "ports", security_group: "security groups", host: "hosts", agent: "agents"};
  const NODE_W = 150, NODE_H = 38, COL_GAP = 40, ROW_GAP = 12, TOP = 34, LEFT = 14;
  const SVG = "http://www.w3.org/2000/svg";

  let model = {nodes: new Map(), edges: []};
  let drawn = "";
  let selected = decodeURIComponent(location.hash.slice(1)) || null;

  function headers() {
    const h = {"Accept": "application/json"};
    const token = sessionStorage.getItem("neutrino-token");
    if (token) h["X-Auth-Token"] = token;
    // Without Keystone (auth_strategy = noauth) the API takes the caller's
    // identity from these headers, as it does from any client.
    if (params.get("project")) {
      h["X-Project-Id"] = params.get("project");
      h["X-User-Id"] = params.get("user") || "topology";
      h["X-Roles"] = params.get("roles") || "member";
    }
    return h;
  }

  class Unauthorized extends Error {}

  async function list(path, key) {
    const resp = await fetch(path, {headers: headers(), cache: "no-store"});
    if (resp.status === 401) throw new Unauthorized();
    // A collection this server does not serve (no router plugin) or that
    // policy hides from this caller (agents) is simply absent.
    if (resp.status === 404 || resp.status === 403) return [];
    if (!resp.ok) throw new Error(path + ": HTTP " + resp.status);
    return (await resp.json())[key] || [];
  }

  // What each DHCP and L3 agent serves, as the agent schedulers' API lists
  // it: [agent id, "network" | "router", object id].
  const SERVES = {"DHCP agent": ["dhcp-networks", "networks", "network"],
    "L3 agent": ["l3-routers", "routers", "router"]};
  async function served(agents) {
    const asks = agents.filter(a => SERVES[a.agent_type]).map(async a => {
      const [path, key, kind] = SERVES[a.agent_type];
      const objs = await list(`/v2.0/agents/${a.id}/${path}`, key);
      return objs.map(o => [a.id, kind, o.id]);
    });
    return (await Promise.all(asks)).flat();
  }

  function short(id) { return String(id || "").slice(0, 8); }

  function build(data) {
    const nodes = new Map(), edges = [], seen = new Set();
    function node(kind, id, label, sub, status, obj) {
      const key = kind + ":" + id;
      nodes.set(key, {key, kind, id, label, sub, status, obj});
      return key;
    }
    function edge(a, b, cls) {
      if (!nodes.has(a) || !nodes.has(b)) return;
      const k = a < b ? a + "|" + b : b + "|" + a;
      if (seen.has(k)) return;
      seen.add(k);
      edges.push({a, b, cls: cls || ""});
    }
    function host(name) {
      if (!name) return null;
      return node("host", name, name, "host", "", {host: name});
    }
    for (const n of data.networks) {
      const flags = [n["router:external"] ? "external" : "", n.shared ? "shared" : ""].filter(Boolean);
      node("network", n.id, n.name || short(n.id), flags.join(", ") || n.status, n.status, n);
    }
    for (const s of data.subnets) node("subnet", s.id, s.name || s.cidr, s.cidr, "", s);
    for (const r of data.routers) {
      const gw = r.external_gateway_info;
      const ips = gw && gw.external_fixed_ips ? gw.external_fixed_ips.map(i => i.ip_address) : [];
      node("router", r.id, r.name || short(r.id), ips.length ? "gw " + ips.join(" ") : r.status, r.status, r);
    }
    for (const g of data.security_groups) node("security_group", g.id, g.name || short(g.id), short(g.id), "", g);
    for (const p of data.ports) {
      const ips = (p.fixed_ips || []).map(i => i.ip_address).join(" ");
      const role = p.device_owner ? p.device_owner.replace(/^network:/, "") : "";
      node("port", p.id, p.name || role || short(p.id), (ips || "no address") + " · " + p.status, p.status, p);
      host(p["binding:host_id"]);
    }
    for (const f of data.floatingips) {
      node("floatingip", f.id, f.floating_ip_address, f.fixed_ip_address ? "→ " + f.fixed_ip_address : f.status, f.status, f);
    }
    for (const a of data.agents) {
      host(a.host);
      node("agent", a.id, a.agent_type, a.host + (a.alive ? "" : " · dead"), a.alive ? "ACTIVE" : "dead", a);
    }
    // Edges, once every node exists.
    for (const s of data.subnets) edge("subnet:" + s.id, "network:" + s.network_id);
    for (const r of data.routers) {
      const gw = r.external_gateway_info;
      if (gw && gw.network_id) edge("router:" + r.id, "network:" + gw.network_id, "gateway");
    }
    for (const p of data.ports) {
      const me = "port:" + p.id;
      const subnets = (p.fixed_ips || []).map(i => "subnet:" + i.subnet_id).filter(k => nodes.has(k));
      if (subnets.length) subnets.forEach(k => edge(me, k));
      else edge(me, "network:" + p.network_id);
      if (nodes.has("router:" + p.device_id)) {
        edge(me, "router:" + p.device_id, p.device_owner === "network:router_gateway" ? "gateway" : "");
      }
      for (const g of p.security_groups || []) edge(me, "security_group:" + g);
      if (p["binding:host_id"]) edge(me, "host:" + p["binding:host_id"]);
    }
    for (const f of data.floatingips) {
      const me = "floatingip:" + f.id;
      edge(me, "network:" + f.floating_network_id, "floating");
      if (f.port_id) edge(me, "port:" + f.port_id, "floating");
      if (f.router_id) edge(me, "router:" + f.router_id, "floating");
    }
    for (const a of data.agents) edge("agent:" + a.id, "host:" + a.host);
    for (const [agent, kind, id] of data.served) edge("agent:" + agent, kind + ":" + id, "serves");
    return {nodes, edges};
  }

  function neighbours(key) {
    const out = [];
    for (const e of model.edges) {
      if (e.a === key) out.push(e.b);
      else if (e.b === key) out.push(e.a);
    }
    return out;
  }

  // A layered layout: one column per kind; within a column, nodes ordered
  // by the mean place of their neighbours (barycentre sweeps, to uncross
  // edges), then placed from the fullest column outwards, each node as
  // close to its placed neighbours as the column's order allows.
  function layout(m) {
    const cols = KINDS.map(() => []);
    const byLabel = (a, b) => (a.label + a.id).localeCompare(b.label + b.id);
    for (const n of m.nodes.values()) cols[KINDS.indexOf(n.kind)].push(n);
    cols.forEach(c => c.sort(byLabel));
    const adj = new Map([...m.nodes.keys()].map(k => [k, []]));
    for (const e of m.edges) { adj.get(e.a).push(e.b); adj.get(e.b).push(e.a); }
    const order = new Map();
    const index = () => cols.forEach(c => c.forEach((n, i) => order.set(n.key, i)));
    index();
    function sweep(ranks, side) {
      for (const r of ranks) {
        const bary = new Map();
        cols[r].forEach((n, i) => {
          const ps = adj.get(n.key).filter(k => side(KINDS.indexOf(m.nodes.get(k).kind), r)).map(k => order.get(k));
          bary.set(n.key, ps.length ? ps.reduce((x, y) => x + y, 0) / ps.length : i);
        });
        cols[r].sort((a, b) => bary.get(a.key) - bary.get(b.key) || byLabel(a, b));
        cols[r].forEach((n, i) => order.set(n.key, i));
      }
    }
    const up = KINDS.map((_, i) => i), down = up.slice().reverse();
    for (let pass = 0; pass < 3; pass++) {
      sweep(up.slice(1), (k, r) => k < r);
      sweep(down.slice(1), (k, r) => k > r);
    }
    const pos = new Map(), step = NODE_H + ROW_GAP;
    const fullest = up.slice().sort((a, b) => cols[b].length - cols[a].length);
    for (const r of fullest) {
      let prev = TOP - step;
      for (const n of cols[r]) {
        const placed = adj.get(n.key).filter(k => pos.has(k)).map(k => pos.get(k).y);
        const want = placed.length ? placed.reduce((x, y) => x + y, 0) / placed.length : prev + step;
        const y = Math.max(prev + step, want);
        pos.set(n.key, {x: LEFT + r * (NODE_W + COL_GAP), y});
        prev = y;
      }
    }
    return pos;
  }

  function el(name, attrs, text) {
    const e = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function clip(s, n) { s = String(s); return s.length > n ? s.slice(0, n - 1) + "…" : s; }

  // Nodes keep their elements from one read to the next (moved, relabelled,
  // removed when gone), so what a reader is looking at or clicking stays.
  function draw() {
    const svg = document.getElementById("graph");
    const pos = layout(model);
    let titles = svg.querySelector("g.titles"), edges = svg.querySelector("g.edges");
    let nodes = svg.querySelector("g.nodes");
    if (!nodes) {
      titles = el("g", {class: "titles"});
      edges = el("g", {class: "edges"});
      nodes = el("g", {class: "nodes"});
      svg.append(titles, edges, nodes);
    }
    titles.replaceChildren();
    KINDS.forEach((k, r) => {
      if ([...model.nodes.values()].some(n => n.kind === k)) {
        titles.append(el("text", {x: LEFT + r * (NODE_W + COL_GAP), y: 18, class: "column-title"}, TITLES[k]));
      }
    });
    edges.replaceChildren();
    for (const e of model.edges) {
      let p = pos.get(e.a), q = pos.get(e.b);
      if (p.x > q.x) [p, q] = [q, p];
      const x1 = p.x + NODE_W, y1 = p.y + NODE_H / 2, x2 = q.x, y2 = q.y + NODE_H / 2, mx = (x1 + x2) / 2;
      edges.append(el("path", {d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`,
        class: "edge " + e.cls, "data-from": e.a, "data-to": e.b}));
    }
    const existing = new Map([...nodes.children].map(g => [g.dataset.key, g]));
    let height = TOP;
    for (const n of model.nodes.values()) {
      const p = pos.get(n.key);
      height = Math.max(height, p.y + NODE_H);
      let g = existing.get(n.key);
      existing.delete(n.key);
      if (!g) {
        g = el("g", {"data-key": n.key, "data-kind": n.kind, "data-id": n.id});
        g.append(el("title", {}, `${n.kind} ${n.id}`), el("rect", {width: NODE_W, height: NODE_H}),
          el("text", {x: 8, y: 15, class: "label"}), el("text", {x: 8, y: 30, class: "sub"}));
        g.addEventListener("click", () => select(n.key));
        nodes.append(g);
      }
      g.setAttribute("class", `node kind-${n.kind} status-${n.status || "none"}`);
      g.setAttribute("transform", `translate(${p.x},${p.y})`);
      g.setAttribute("data-status", n.status || "");
      g.querySelector(".label").textContent = clip(n.label, 21);
      g.querySelector(".sub").textContent = clip(n.sub, 25);
    }
    for (const g of existing.values()) g.remove();
    svg.setAttribute("width", LEFT + KINDS.length * (NODE_W + COL_GAP));
    svg.setAttribute("height", height + 20);
    highlight();
  }

  function highlight() {
    const near = new Set(selected ? neighbours(selected) : []);
    for (const g of document.querySelectorAll("#graph .node")) {
      g.classList.toggle("selected", g.dataset.key === selected);
      g.classList.toggle("neighbour", near.has(g.dataset.key));
      g.classList.toggle("on-path", path.keys.has(g.dataset.key));
      g.classList.toggle("path-stop", path.stops.has(g.dataset.key));
    }
    for (const e of document.querySelectorAll("#graph path.edge")) {
      e.classList.toggle("on-path", path.keys.has(e.dataset.from) && path.keys.has(e.dataset.to));
    }
    sources();
  }

  // The tracer: one packet through POST /v2.0/trace (the page's own
  // credentials), its hops listed with what decided them and drawn on the
  // graph: the objects on the path, and where it stops.
  let path = {keys: new Set(), stops: new Set()};
  const HOP_OBJECTS = [["port_id", "port"], ["network_id", "network"], ["router_id", "router"],
    ["subnet_id", "subnet"], ["floatingip_id", "floatingip"], ["security_group_id", "security_group"]];

  function hopKeys(hop) {
    const keys = [];
    for (const [attr, kind] of HOP_OBJECTS) if (hop[attr]) keys.push(kind + ":" + hop[attr]);
    for (const g of hop.security_group_ids || []) keys.push("security_group:" + g);
    return keys;
  }

  let sourcesShown = "";
  function sources() {
    const select = document.getElementById("trace-source");
    const opts = [];
    for (const n of model.nodes.values()) {
      if (n.kind === "port" && !(n.obj.device_owner || "").startsWith("network:") && (n.obj.fixed_ips || []).length) {
        opts.push(["port:" + n.id, `port ${n.label} (${n.obj.fixed_ips.map(i => i.ip_address).join(" ")})`]);
      } else if (n.kind === "floatingip" && n.obj.port_id) {
        opts.push(["ip:" + n.obj.floating_ip_address, `floating IP ${n.obj.floating_ip_address}`]);
      }
    }
    opts.sort((a, b) => a[1].localeCompare(b[1]));
    opts.push(["outside", "an outside address…"]);
    const sig = JSON.stringify(opts);
    if (sig === sourcesShown) return;
    sourcesShown = sig;
    const was = select.value;
    select.replaceChildren(...opts.map(([value, text]) => {
      const o = document.createElement("option");
      o.value = value;
      o.textContent = text;
      return o;
    }));
    if (opts.some(([value]) => value === was)) select.value = was;
    outsideShown();
  }

  function outsideShown() {
    document.getElementById("trace-from-label").hidden = document.getElementById("trace-source").value !== "outside";
  }

  function traceBody() {
    const source = document.getElementById("trace-source").value;
    const body = {destination_ip: document.getElementById("trace-to").value.trim(),
      protocol: document.getElementById("trace-protocol").value};
    if (source.startsWith("port:")) body.port_id = source.slice(5);
    else if (source.startsWith("ip:")) body.source_ip = source.slice(3);
    else body.source_ip = document.getElementById("trace-from").value.trim();
    const dport = document.getElementById("trace-dport").value;
    if (dport !== "") body.destination_port = Number(dport);
    if (document.getElementById("trace-live").checked) body.live = true;
    return {trace: body};
  }

  function line(tag, text, attrs) {
    const e = document.createElement(tag);
    e.textContent = text;
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    return e;
  }

  function showTrace(t) {
    const out = document.getElementById("trace-result");
    const hops = t.live ? t.live.hops : t.hops;
    out.replaceChildren(line("p", `${t.verdict}: ${t.reason}`, {id: "trace-verdict", "data-verdict": t.verdict}));
    if (t.live) {
      out.append(line("p", `hosts: ${t.live.verdict}` + (t.live.agrees ? ", as the model" : ", unlike the model"),
        {id: "trace-live-verdict", "data-verdict": t.live.verdict, "data-agrees": String(t.live.agrees)}));
      const ul = line("ul", "", {id: "trace-disagreements"});
      for (const d of t.live.disagreements) ul.append(line("li", d));
      out.append(ul);
    }
    const ol = line("ol", "", {id: "trace-hops"});
    hops.forEach((hop, i) => {
      const last = i === hops.length - 1;
      const model = hop.model || (last && t.verdict !== "allowed" ? t.verdict : "passed");
      const li = line("li", "", {"data-kind": hop.kind, "data-model": model,
        "data-keys": hopKeys(hop).join(" ")});
      if (hop.live) li.dataset.live = hop.live.verdict;
      li.append(line("b", hop.kind), line("span", " " + hop.detail, {class: "detail"}));
      const rule = hop.security_group_rule_id ? "rule " + hop.security_group_rule_id
        : hop.rule ? "rule " + hop.rule : hop.nexthop ? "next hop " + hop.nexthop : "";
      if (rule) li.append(line("span", rule, {class: "rule"}));
      li.append(line("span", `model: ${model}` + (hop.live ? ` · host ${hop.live.host}: ${hop.live.verdict}` : ""),
        {class: "hop-verdict"}));
      if (hop.live && hop.live.verdict !== "passed") li.append(line("span", hop.live.detail, {class: "rule"}));
      li.addEventListener("mouseenter", () => { for (const k of hopKeys(hop)) document.querySelector(`#graph g.node[data-key="${k}"]`)?.classList.add("hop-focus"); });
      li.addEventListener("mouseleave", () => document.querySelectorAll("#graph .hop-focus").forEach(g => g.classList.remove("hop-focus")));
      ol.append(li);
    });
    out.append(ol);
    const keys = new Set(hops.flatMap(hopKeys)), stops = new Set();
    const stop = hops.find(h => h.live && (h.live.verdict === "dropped" || h.live.verdict === "differs"));
    if (t.verdict !== "allowed" && hops.length) hopKeys(hops[hops.length - 1]).forEach(k => stops.add(k));
    if (stop) hopKeys(stop).forEach(k => stops.add(k));
    path = {keys, stops};
    highlight();
  }

  async function runTrace(ev) {
    ev.preventDefault();
    const out = document.getElementById("trace-result");
    out.replaceChildren(line("p", "tracing…", {id: "trace-verdict", "data-verdict": "pending"}));
    try {
      const resp = await fetch("/v2.0/trace", {method: "POST", cache: "no-store",
        headers: {...headers(), "Content-Type": "application/json"}, body: JSON.stringify(traceBody())});
      const answer = await resp.json();
      if (!resp.ok) {
        const err = answer.NeutronError || {};
        out.replaceChildren(line("p", `refused (HTTP ${resp.status}): ${err.message || JSON.stringify(answer)}`,
          {id: "trace-verdict", "data-verdict": "error"}));
        path = {keys: new Set(), stops: new Set()};
        highlight();
        return;
      }
      showTrace(answer.trace);
    } catch (err) {
      out.replaceChildren(line("p", "cannot trace: " + err.message, {id: "trace-verdict", "data-verdict": "error"}));
    }
  }

  document.getElementById("tracer").addEventListener("submit", runTrace);
  document.getElementById("trace-source").addEventListener("change", outsideShown);
  document.getElementById("trace-clear").addEventListener("click", () => {
    document.getElementById("trace-result").replaceChildren();
    path = {keys: new Set(), stops: new Set()};
    highlight();
  });

  function show(v) {
    if (v === null || v === undefined) return "";
    return typeof v === "object" ? JSON.stringify(v) : String(v);
  }

  // What the panel shows, to redraw it only when that changed.
  function panelFor() {
    const n = selected && model.nodes.get(selected);
    return JSON.stringify([selected, n ? n.obj : null, selected ? neighbours(selected) : []]);
  }
  let panelShown = "";

  function panel() {
    panelShown = panelFor();
    const aside = document.getElementById("panel");
    aside.replaceChildren();
    const n = selected && model.nodes.get(selected);
    if (!n) {
      const p = document.createElement("p");
      p.className = "hint";
      p.textContent = selected ? "This object is gone." : "Select an object to see its attributes and neighbours.";
      aside.append(p);
      return;
    }
    const h = document.createElement("h2");
    h.textContent = `${n.kind.replace("_", " ")} ${n.label}`;
    aside.append(h);
    const h3 = document.createElement("h2");
    h3.textContent = "neighbours";
    aside.append(h3);
    const ul = document.createElement("ul");
    ul.id = "neighbours";
    for (const k of neighbours(n.key)) {
      const m = model.nodes.get(k);
      const li = document.createElement("li"), a = document.createElement("a");
      a.textContent = `${m.kind.replace("_", " ")} ${m.label}`;
      a.dataset.key = k;
      a.href = "#" + encodeURIComponent(k);
      a.addEventListener("click", ev => { ev.preventDefault(); select(k); });
      li.append(a);
      ul.append(li);
    }
    aside.append(ul);
    const h4 = document.createElement("h2");
    h4.textContent = "attributes";
    aside.append(h4);
    const table = document.createElement("table");
    table.id = "attributes";
    for (const [k, v] of Object.entries(n.obj).sort()) {
      const tr = table.insertRow();
      tr.dataset.attribute = k;
      tr.insertCell().textContent = k;
      tr.insertCell().textContent = show(v);
    }
    aside.append(table);
  }

  function select(key) {
    selected = key;
    history.replaceState(null, "", "#" + encodeURIComponent(key));
    highlight();
    panel();
  }

  async function refresh() {
    const status = document.getElementById("status");
    try {
      const lists = await Promise.all(SOURCES.map(([key, path]) => list(path, key)));
      const data = Object.fromEntries(SOURCES.map(([key], i) => [key, lists[i]]));
      data.served = await served(data.agents);
      const next = build(data);
      const sig = JSON.stringify([[...next.nodes.values()].map(n => [n.key, n.obj]), next.edges]);
      model = next;
      if (sig !== drawn) {
        drawn = sig;
        draw();
        const shown = panelFor();
        if (shown !== panelShown) panel();
      }
      document.getElementById("auth").hidden = true;
      status.textContent = `${model.nodes.size} objects · read ${new Date().toLocaleTimeString()}`;
      status.dataset.state = "ok";
    } catch (err) {
      if (err instanceof Unauthorized) {
        document.getElementById("auth").hidden = false;
        status.textContent = "a Keystone token is needed";
        status.dataset.state = "unauthorized";
      } else {
        status.textContent = "cannot read the API: " + err.message;
        status.dataset.state = "error";
      }
    }
  }

  document.getElementById("auth").addEventListener("submit", ev => {
    ev.preventDefault();
    sessionStorage.setItem("neutrino-token", document.getElementById("token").value.trim());
    refresh();
  });

  async function loop() {
    await refresh();
    setTimeout(loop, POLL_MS);
  }
  loop();
})();
