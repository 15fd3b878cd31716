// The live venue page: one server-sent event stream (/api/stream) starts with a snapshot and then
// carries every change; the visits chart comes from /api/visits. No framework, no build step.
"use strict";

const state = { venues: [], zones: [], beacons: new Map(), users: new Map(), nodes: [], events: [] };
const feedLimit = 100;
const svgNS = "http://www.w3.org/2000/svg";

function el(tag, attrs, text) {
  const node = tag.startsWith("svg:") ? document.createElementNS(svgNS, tag.slice(4)) : document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

function clock(ms) {
  return new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
}

function ago(ms) {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 60) return s + " s";
  if (s < 3600) return Math.round(s / 60) + " min";
  return (s / 3600).toFixed(1) + " h";
}

function beaconName(key) {
  const beacon = state.beacons.get(key);
  return (beacon && beacon.name) || key;
}

function userName(user) {
  return user.name || user.user;
}

function applySnapshot(snapshot) {
  state.venues = snapshot.venues || [];
  state.zones = (snapshot.zones || []).map((z) => ({ ...z, inside: new Set(z.beacons) }));
  state.beacons = new Map((snapshot.beacons || []).map((b) => [b.key, b]));
  state.users = new Map((snapshot.users || []).map((u) => [u.user, u]));
  state.nodes = snapshot.nodes || [];
  state.events = snapshot.events || [];
  renderAll();
}

function renderAll() {
  renderSummary();
  renderPlans();
  renderZones();
  renderPeople();
  renderFeed();
  renderNodes();
}

function present() {
  return [...state.users.values()].filter((u) => u.beacon);
}

// How many present users are at a beacon inside `zone`.
function zoneCount(zone) {
  return present().filter((u) => zone.inside.has(u.beacon)).length;
}

function renderZones() {
  const list = document.getElementById("zones");
  document.getElementById("zones-section").hidden = state.zones.length === 0;
  list.replaceChildren(...state.zones.map((zone) => {
    const count = zoneCount(zone);
    const item = el("li", { "data-zone": zone.key });
    item.append(el("b", {}, zone.name || zone.key), document.createTextNode(" "),
                el("span", { class: "zone-count" }, String(count)), document.createTextNode(count === 1 ? " person" : " people"));
    return item;
  }));
}

function renderSummary() {
  const names = state.venues.map((v) => v.name || v.key).join(", ");
  document.getElementById("venue-names").textContent = names ? "· " + names : "";
  const people = present().length;
  document.getElementById("people-count").textContent = people + (people === 1 ? " person" : " people");
  const online = state.nodes.filter((n) => n.online === true).length;
  const known = state.nodes.some((n) => n.online !== undefined);
  document.getElementById("nodes-count").textContent = known ? online + " of " + state.nodes.length + " nodes online" : "";
}

// One plan per venue and floor, scaled to the coordinates registered; beacons without coordinates
// are set out in a row below.
function renderPlans() {
  const plans = document.getElementById("plans");
  plans.replaceChildren();
  const groups = new Map();
  const group = (venue, floor) => {
    const key = (venue || "") + "|" + (floor ?? "");
    if (!groups.has(key)) groups.set(key, { venue, floor, beacons: [], nodes: [] });
    return groups.get(key);
  };
  for (const beacon of state.beacons.values()) group(beacon.venue, beacon.floor).beacons.push(beacon);
  for (const node of state.nodes) if (node.x !== undefined && node.y !== undefined) group(node.venue, node.floor).nodes.push(node);
  const byBeacon = new Map();
  for (const user of present()) {
    if (!byBeacon.has(user.beacon)) byBeacon.set(user.beacon, []);
    byBeacon.get(user.beacon).push(user);
  }
  for (const g of groups.values()) plans.append(plan(g, byBeacon));
  if (!groups.size) plans.append(el("p", { class: "muted" }, "No beacons registered."));
}

function plan(g, byBeacon) {
  const placed = g.beacons.filter((b) => b.x !== undefined && b.y !== undefined);
  const loose = g.beacons.filter((b) => b.x === undefined || b.y === undefined);
  // Zones are drawn as regions around their beacons on this plan, an outer one around the inner.
  const here = new Set(g.beacons.map((b) => b.key));
  const zones = state.zones.filter((z) => z.beacons.some((k) => here.has(k))).map((z) => {
    const mine = z.beacons.filter((k) => here.has(k));
    const inner = state.zones.filter((o) => o !== z && o.beacons.length < z.beacons.length && o.beacons.every((k) => z.inside.has(k))).length;
    return { zone: z, mine, pad: 40 + 14 * inner };
  }).sort((a, b) => b.pad - a.pad);
  const xs = placed.map((b) => b.x).concat(g.nodes.map((n) => n.x));
  const ys = placed.map((b) => b.y).concat(g.nodes.map((n) => n.y));
  const minX = Math.min(0, ...xs), maxX = Math.max(1, ...xs), minY = Math.min(0, ...ys), maxY = Math.max(1, ...ys);
  const width = 640, margin = 50 + (zones.length ? zones[0].pad - 16 : 0);
  const scale = Math.min((width - 2 * margin) / (maxX - minX || 1), 40);
  const planHeight = xs.length ? (maxY - minY) * scale + 2 * margin : 0;
  const height = planHeight + Math.ceil(loose.length / 8) * 90 + 10;
  const svg = el("svg:svg", { class: "plan", viewBox: `0 0 ${width} ${height}`, role: "img" });
  const at = (x, y) => [margin + (x - minX) * scale, margin + (maxY - y) * scale];
  // A node at a beacon (the usual anchored node) sits to the left of the beacon and its people.
  const beside = (x, y) => placed.some((b) => { const [bx, by] = at(b.x, b.y); return Math.hypot(bx - x, by - y) < 20; });
  for (const node of g.nodes) {
    let [x, y] = at(node.x, node.y);
    if (beside(x, y)) [x, y] = [x - 44, y];
    const cls = node.online === true ? "online" : node.online === false ? "offline" : "";
    const n = el("svg:g", { class: "node " + cls, "data-node": node.key });
    n.append(el("svg:rect", { x: x - 5, y: y - 5, width: 10, height: 10 }), el("svg:title", {}, "node " + node.key));
    svg.append(n);
  }
  const spots = [];
  placed.forEach((b) => spots.push([b, ...at(b.x, b.y)]));
  loose.forEach((b, i) => spots.push([b, margin + (i % 8) * 75, planHeight + 45 + Math.floor(i / 8) * 90]));
  const spotOf = new Map(spots.map(([b, x, y]) => [b.key, [x, y]]));
  for (const { zone, mine, pad } of zones) {
    const xs = mine.map((k) => spotOf.get(k)[0]), ys = mine.map((k) => spotOf.get(k)[1]);
    const x = Math.min(...xs) - pad, y = Math.min(...ys) - pad;
    const region = el("svg:g", { class: "zone", "data-zone": zone.key });
    region.append(el("svg:rect", { x, y, width: Math.max(...xs) - Math.min(...xs) + 2 * pad, height: Math.max(...ys) - Math.min(...ys) + 2 * pad + 30, rx: 10 }));
    const label = el("svg:text", { x: x + 8, y: y + 14, class: "zone-label" }, (zone.name || zone.key) + " · ");
    label.append(el("svg:tspan", { class: "zone-count" }, String(zoneCount(zone))));
    region.append(label);
    svg.append(region);
  }
  for (const [beacon, x, y] of spots) {
    const users = byBeacon.get(beacon.key) || [];
    const b = el("svg:g", { class: "beacon" + (users.length ? " occupied" : ""), "data-beacon": beacon.key });
    b.append(el("svg:circle", { cx: x, cy: y, r: 18 }));
    b.append(el("svg:text", { x, y: y + 4, "text-anchor": "middle", class: "count", "data-count": users.length }, String(users.length)));
    b.append(el("svg:text", { x, y: y + 50, "text-anchor": "middle" }, beacon.name || beacon.key));
    svg.append(b);
    // People ring their beacon: the beacon is the decision; an estimated position can be metres off.
    users.forEach((user, i) => {
      const ring = Math.floor(i / 8), angle = -Math.PI / 2 + ((i % 8) * 2 * Math.PI) / 8 + ring * 0.4;
      const px = x + (26 + 9 * ring) * Math.cos(angle), py = y + (26 + 9 * ring) * Math.sin(angle);
      const dot = el("svg:circle", { class: "person", cx: px, cy: py, r: 5, "data-user": user.user });
      dot.append(el("svg:title", {}, userName(user)));
      svg.append(dot);
    });
  }
  const wrap = el("div");
  const venue = state.venues.find((v) => v.key === g.venue);
  const title = [venue ? venue.name || venue.key : g.venue, g.floor !== undefined ? "floor " + g.floor : ""].filter(Boolean).join(" · ");
  if (title) wrap.append(el("p", { class: "plan-title" }, title));
  wrap.append(svg);
  return wrap;
}

function renderPeople() {
  const list = document.getElementById("people");
  const people = present().sort((a, b) => userName(a).localeCompare(userName(b)));
  list.replaceChildren(...people.map((u) => {
    const item = el("li", { "data-user": u.user, "data-beacon": u.beacon });
    const near = typeof u.distance === "number" ? ` (${u.distance.toFixed(1)} m)` : "";
    item.append(el("b", {}, userName(u)), document.createTextNode(" at " + beaconName(u.beacon) + near + " "),
                el("span", { class: "muted", title: new Date(u.since).toISOString() }, "for " + ago(u.since)));
    return item;
  }));
  document.getElementById("nobody").hidden = people.length > 0;
}

function renderFeed() {
  const feed = document.getElementById("feed");
  feed.replaceChildren(...state.events.slice(-feedLimit).reverse().map((e) => {
    const who = e.name || e.user, where = e.beacon_name || e.beacon;
    const text = e.event === "enter"
      ? ` ${who} entered ${where}` + (e.distance !== undefined ? ` (${e.distance} m)` : "")
      : ` ${who} left ${where}` + (e.reason ? ` (${e.reason}${e.dwell !== undefined ? ", " + ago(Date.now() - e.dwell * 1000) : ""})` : "");
    const item = el("li", { class: e.event, "data-cursor": e.cursor });
    item.append(el("span", { class: "muted" }, clock(e.at)), el("b", {}, " " + e.event), document.createTextNode(text));
    return item;
  }));
}

function renderNodes() {
  const body = document.querySelector("#nodes tbody");
  body.replaceChildren(...state.nodes.map((n) => {
    const row = el("tr", { "data-node": n.key });
    const up = n.online === true ? "online" : n.online === false ? "offline" : "unknown";
    row.append(el("td", {}, n.key), el("td", { class: up }, up),
               el("td", {}, n.sightings_per_second !== undefined ? String(n.sightings_per_second) : "–"),
               el("td", {}, n.last_seen ? ago(n.last_seen) + " ago" : "–"),
               el("td", {}, n.clock_skew_ms !== undefined ? n.clock_skew_ms + " ms" : "–"),
               el("td", {}, (n.offset_db >= 0 ? "+" : "") + n.offset_db + " dB " + n.offset_source));
    return row;
  }));
}

// Gluecon-style bars: one small chart per beacon, unique visitors per 30-minute bucket.
function renderVisits(data) {
  const box = document.getElementById("visits");
  const byBeacon = new Map();
  for (const v of data.visits) {
    if (!byBeacon.has(v.beacon)) byBeacon.set(v.beacon, new Map());
    byBeacon.get(v.beacon).set(v.bucket, v.visitors);
  }
  if (!byBeacon.size) { box.replaceChildren(el("p", { class: "muted" }, "No visits yet.")); return; }
  const step = data.bucket_ms, last = Math.floor(Date.now() / step) * step, buckets = [];
  for (let t = Math.max(Math.floor(data.since / step) * step, last - 15 * step); t <= last; t += step) buckets.push(t);
  const top = Math.max(1, ...data.visits.map((v) => v.visitors));
  const charts = [...byBeacon.keys()].sort().map((beacon) => {
    const counts = byBeacon.get(beacon), w = 320, h = 130, bw = (w - 40) / buckets.length;
    const svg = el("svg:svg", { class: "chart", viewBox: `0 0 ${w} ${h}`, "data-beacon": beacon });
    svg.append(el("svg:text", { x: 0, y: 12, class: "title" }, beaconName(beacon)));
    buckets.forEach((t, i) => {
      const n = counts.get(t) || 0, bh = (n / top) * 80;
      const bar = el("svg:rect", { class: "bar", x: 30 + i * bw, y: 100 - bh, width: Math.max(1, bw - 2), height: bh, "data-bucket": t, "data-count": n });
      bar.append(el("svg:title", {}, `${clock(t)}: ${n} visitor${n === 1 ? "" : "s"}`));
      svg.append(bar);
      if (n) svg.append(el("svg:text", { x: 30 + i * bw + bw / 2 - 1, y: 96 - bh, "text-anchor": "middle" }, String(n)));
      if (i % 4 === 0) svg.append(el("svg:text", { x: 30 + i * bw, y: 115 }, clock(t).slice(0, 5)));
    });
    svg.append(el("svg:text", { x: 0, y: 104 }, "0"), el("svg:text", { x: 0, y: 24 }, String(top)));
    return svg;
  });
  box.replaceChildren(...charts);
}

let visitsTimer = null;
function loadVisits(delay) {
  clearTimeout(visitsTimer);
  visitsTimer = setTimeout(async () => {
    try {
      const response = await fetch("/api/visits?hours=8");
      if (response.ok) renderVisits(await response.json());
      else document.getElementById("visits").replaceChildren(el("p", { class: "muted" }, "Visits are unavailable while the database is."));
    } catch (error) { /* offline: the next refresh tries again */ }
    loadVisits(60000);
  }, delay);
}

function connect() {
  const link = document.getElementById("link");
  const stream = new EventSource("/api/stream");
  stream.onopen = () => { link.textContent = "live"; link.className = "up"; };
  stream.onerror = () => { link.textContent = "reconnecting…"; link.className = "down"; };
  stream.addEventListener("snapshot", (m) => applySnapshot(JSON.parse(m.data)));
  stream.addEventListener("presence", (m) => {
    const event = JSON.parse(m.data);
    // The feed is in the order of the events' time: a back-dated exit goes before a later enter.
    state.events.push(event);
    state.events.sort((a, b) => a.at - b.at || a.cursor - b.cursor);
    if (state.events.length > feedLimit) state.events.shift();
    renderFeed();
    if (event.event === "enter") loadVisits(2000);
  });
  stream.addEventListener("user", (m) => {
    const user = JSON.parse(m.data);
    if (user.beacon) state.users.set(user.user, user); else state.users.delete(user.user);
    renderSummary(); renderPlans(); renderZones(); renderPeople();
  });
  stream.addEventListener("beacon", (m) => {
    const update = JSON.parse(m.data), beacon = state.beacons.get(update.beacon);
    if (beacon) beacon.count = update.count;
  });
  stream.addEventListener("nodes", (m) => { state.nodes = JSON.parse(m.data).nodes; renderSummary(); renderPlans(); renderNodes(); });
}

connect();
loadVisits(0);
setInterval(renderPeople, 15000);
