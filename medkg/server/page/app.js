// The medkg review page. Everything it shows comes from the API as JSON and is
// put into the page as text (textContent, createTextNode): document text, names
// and reasons are untrusted and never become markup.
// Over 500 lines because it is the page's one script, served as a static file with
// no build step; its sections (helpers, sign in, routing, the queue, decisions,
// entity, document, audit and ask, keys) are marked below.
"use strict";

const PREDICATES = ["treats", "causes", "has_adverse_effect", "prevents", "contraindicated_in",
  "has_symptom", "diagnoses", "location_of", "is_a", "associated_with", "interacts_with"];

const state = {
  token: sessionStorage.getItem("medkg-token") || "",
  items: [], total: 0, index: 0, selected: new Set(), current: null, mine: [],
};

// -- helpers ------------------------------------------------------------------

function $(id) { return document.getElementById(id); }

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }

function say(text, bad) {
  const status = $("status");
  status.textContent = text;
  status.className = bad ? "error" : "";
}

async function api(method, path, body) {
  const options = { method, headers: { Authorization: "Bearer " + state.token } };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  if (response.status === 401) { signOut("That token is not valid here."); throw new Error("401"); }
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const text = (data.error || response.statusText) + (data.hint ? " (" + data.hint + ")" : "");
    throw new Error(text);
  }
  return data;
}

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== "" && v !== null && v !== undefined) q.set(k, v);
  return q.toString();
}

// -- sign in ------------------------------------------------------------------

function signOut(message) {
  state.token = "";
  sessionStorage.removeItem("medkg-token");
  $("app").hidden = true;
  $("signin").hidden = false;
  $("signin-error").textContent = message || "";
}

async function signIn(token) {
  state.token = token;
  try {
    const me = await api("GET", "/api/me");
    sessionStorage.setItem("medkg-token", token);
    $("who").textContent = me.reviewer + " · " + me.workspace;
    $("signin").hidden = true;
    $("app").hidden = false;
    route();
  } catch (err) {
    if (String(err.message) !== "401") signOut(String(err.message));
  }
}

// -- routing ------------------------------------------------------------------

function show(view) {
  for (const v of document.querySelectorAll(".view")) v.hidden = v.id !== "view-" + view;
}

function route() {
  const hash = location.hash.replace(/^#\/?/, "");
  const [view, id, extra] = hash.split("/");
  if (view === "entity" && id) { show("entity"); openEntity(decodeURIComponent(id)); }
  else if (view === "doc" && id) { show("doc"); openDocument(decodeURIComponent(id), extra || ""); }
  else if (view === "audit") { show("audit"); openAudit(); }
  else if (view === "ask") { show("ask"); $("ask-input").focus(); }
  else if (view === "statement" && id) { show("queue"); loadQueue(decodeURIComponent(id)); }
  else { show("queue"); loadQueue(); }
}

// -- the queue ----------------------------------------------------------------

function filters() {
  return {
    state: $("f-state").value, kind: $("f-kind").value, layer: $("f-layer").value,
    predicate: $("f-predicate").value, entity: $("f-entity").value.trim(),
    document: $("f-document").value.trim(), limit: 500,
  };
}

async function loadQueue(focusId) {
  try {
    const page = await api("GET", "/api/queue?" + query(filters()));
    state.items = page.items;
    state.total = page.total;
    state.selected = new Set([...state.selected].filter((id) => page.items.some((i) => i.id === id)));
    let index = focusId ? page.items.findIndex((i) => i.id === focusId) : Math.min(state.index, page.items.length - 1);
    if (focusId && index < 0) { drawQueue(); return openStatement(focusId); }
    state.index = Math.max(index, 0);
    drawQueue();
    await openCurrent();
  } catch (err) { say(String(err.message), true); }
}

function drawQueue() {
  const list = clear($("queue-list"));
  $("queue-count").textContent = state.total + " item(s)" +
    (state.selected.size ? ", " + state.selected.size + " selected" : "");
  state.items.forEach((item, i) => {
    const box = el("input", { type: "checkbox", title: "select (x)", "aria-label": "select" });
    box.checked = state.selected.has(item.id);
    box.addEventListener("click", (ev) => { ev.stopPropagation(); toggle(item.id); });
    const row = el("li", { class: "item" + (i === state.index ? " current" : ""), "data-id": item.id },
      box,
      el("span", { class: "priority", text: item.priority.toFixed(2), title: "priority" }),
      el("span", { class: "label", text: item.label }),
      el("span", { class: "badge layer-" + item.layer, text: item.layer }),
      el("span", { class: "reasons", text: item.reasons.map((r) => r.code).join(" · ") }));
    row.addEventListener("click", () => { state.index = i; drawQueue(); openCurrent(); });
    list.append(row);
  });
  const current = list.querySelector(".current");
  if (current) current.scrollIntoView({ block: "nearest" });
}

function toggle(id) {
  if (state.selected.has(id)) state.selected.delete(id); else state.selected.add(id);
  drawQueue();
}

async function openCurrent() {
  const item = state.items[state.index];
  if (!item) {
    state.current = null;
    clear($("detail")).append(el("p", { class: "empty", text: "Nothing to review with these filters." }));
    $("actions").hidden = true;
    return;
  }
  if (item.kind === "merge") return openMerge(item);
  return openStatement(item.id);
}

function entityLink(card) {
  return el("a", { href: "#/entity/" + encodeURIComponent(card.id), class: "entity", text: card.name });
}

function concepts(card) {
  const list = el("ul", { class: "concepts" });
  if (!card.concepts.length) list.append(el("li", { class: "muted", text: "no concept" }));
  for (const c of card.concepts) {
    list.append(el("li", {}, el("code", { text: c.id }), " ", el("b", { text: c.name }), ": ",
      c.definition || "(no definition)"));
  }
  return list;
}

function quote(ev) {
  // The quote with each mention of either end marked; every piece is a text node.
  const node = el("blockquote", { class: "quote" });
  let at = 0;
  for (const mark of ev.marks) {
    if (mark.start < at) continue;
    node.append(document.createTextNode(ev.quote.slice(at, mark.start)));
    node.append(el("mark", { class: mark.role, text: ev.quote.slice(mark.start, mark.end) }));
    at = mark.end;
  }
  node.append(document.createTextNode(ev.quote.slice(at)));
  return node;
}

function historyList(decisions) {
  if (!decisions.length) return el("p", { class: "muted", text: "no decisions yet" });
  const list = el("ol", { class: "history" });
  const undone = new Set(decisions.filter((d) => d.undoes).map((d) => d.undoes));
  for (const d of decisions) {
    const what = d.undoes ? "undo of " + d.undoes : d.action;
    const li = el("li", { class: undone.has(d.id) ? "undone" : "" },
      el("time", { text: d.at.replace("T", " ").slice(0, 19) }), " ", el("b", { text: d.reviewer }),
      " ", what, d.reason ? " — " + d.reason : "", " ", el("code", { text: d.id }));
    if (!d.undoes && !undone.has(d.id)) {
      li.append(" ", el("button", { type: "button", class: "small", text: "Undo",
        onclick: () => undo(d.id) }));
    }
    list.append(li);
  }
  return list;
}

async function openStatement(id) {
  try {
    const view = await api("GET", "/api/statements/" + encodeURIComponent(id));
    state.current = { kind: "statement", id, view };
    const t = view.triple;
    const q = t.qualifiers;
    const flags = ["negated", "uncertain", "hypothetical", "historical"].filter((k) => q[k]);
    const detail = clear($("detail"));
    detail.append(
      el("h2", { class: "statement" }, entityLink(view.head), el("span", { class: "predicate", text: " —" + t.predicate + "→ " }), entityLink(view.tail)),
      el("p", { class: "meta" },
        el("span", { class: "badge state-" + t.review, text: t.review }), " ",
        el("span", { class: "badge layer-" + t.layer, text: t.layer }),
        " confidence " + t.confidence.toFixed(2) + " · " + t.method +
        (flags.length ? " · " + flags.join(", ") : "") +
        (q.experiencer !== "patient" ? " · experiencer " + q.experiencer : "") +
        (q.population ? " · population " + q.population : ""), " ", el("code", { text: t.id })));
    if (t.revision_of) detail.append(el("p", { class: "muted" }, "a curator's version of ",
      el("a", { href: "#/statement/" + t.revision_of, text: t.revision_of })));
    for (const r of view.revised_as) detail.append(el("p", { class: "muted" }, "replaced by ",
      el("a", { href: "#/statement/" + r, text: r })));
    for (const r of view.same_content) detail.append(el("p", { class: "muted same-content" },
      "states the same as ", el("a", { href: "#/statement/" + r, text: r }),
      ", which keeps its own review state"));
    const ends = el("div", { class: "ends" });
    for (const [role, card] of [["head", view.head], ["tail", view.tail]]) {
      ends.append(el("div", { class: "end " + role }, el("h3", {}, role + ": ", entityLink(card), " ",
        el("span", { class: "muted", text: "(" + card.type + ")" })), concepts(card)));
    }
    detail.append(ends);
    const why = el("ul", { class: "why" });
    if (!view.reasons.length) why.append(el("li", { class: "muted", text: "no flags" }));
    for (const r of view.reasons) why.append(el("li", {}, el("code", { text: r.code }), " " + r.text + " (+" + r.weight + ")"));
    detail.append(el("h3", { text: "Why it is here · priority " + view.priority.toFixed(2) }), why);
    detail.append(el("h3", { text: "Evidence" }));
    for (const ev of view.evidence) {
      detail.append(el("div", { class: "evidence" }, quote(ev), el("a", {
        href: "#/doc/" + encodeURIComponent(ev.document_id) + "/" + ev.start + "-" + ev.end,
        class: "doclink", text: ev.document_title + " · characters " + ev.start + "–" + ev.end })));
    }
    detail.append(el("h3", { text: "History" }), historyList(view.history));
    $("actions").hidden = false;
    for (const b of ["do-accept", "do-reject", "do-edit"]) $(b).hidden = false;
    for (const b of ["do-confirm", "do-split"]) $(b).hidden = true;
    $("edit-form").hidden = true;
  } catch (err) { say(String(err.message), true); }
}

async function openMerge(item) {
  try {
    const view = await api("GET", "/api/entities/" + encodeURIComponent(item.id));
    const history = await api("GET", "/api/audit?" + query({ target: item.id }));
    state.current = { kind: "merge", id: item.id, view };
    const detail = clear($("detail"));
    detail.append(el("h2", { text: item.label }), el("p", { class: "meta" },
      el("span", { class: "badge state-" + item.state, text: item.state }), " ",
      el("code", { text: item.id })));
    const why = el("ul", { class: "why" });
    for (const r of item.reasons) why.append(el("li", {}, el("code", { text: r.code }), " " + r.text));
    detail.append(why, el("h3", {}, "merged entity: ", entityLink(view.entity)), concepts(view.entity));
    for (const m of view.merges) {
      detail.append(el("p", {}, m.kind + " " + m.direction + " ", el("a", { href: "#/entity/" + encodeURIComponent(m.other), text: m.other_name }),
        " (" + m.method + ", " + m.score.toFixed(3) + ")"));
    }
    detail.append(el("h3", { text: "History" }), historyList(history));
    $("actions").hidden = false;
    for (const b of ["do-accept", "do-reject", "do-edit"]) $(b).hidden = true;
    for (const b of ["do-confirm", "do-split"]) $(b).hidden = false;
    $("edit-form").hidden = true;
  } catch (err) { say(String(err.message), true); }
}

// -- decisions ----------------------------------------------------------------

// An edit whose new version states what another statement states already: the
// curator is told, since that statement keeps its own review state.
async function landing(target) {
  const view = await api("GET", "/api/statements/" + encodeURIComponent(target));
  for (const r of view.revised_as) {
    const version = await api("GET", "/api/statements/" + encodeURIComponent(r));
    if (version.same_content.length) {
      return " · the new version states what " + version.same_content.join(", ") +
        " states already; that statement keeps its own review state";
    }
  }
  return "";
}

async function decide(body, label) {
  // The decided item leaves the list at once and the next one opens; the whole
  // queue (its priorities change as decisions are made) is read again every
  // REFRESH_EVERY decisions, or when the list runs out.
  const started = performance.now();
  try {
    const decision = await api("POST", "/api/review", body);
    state.mine.push(decision.id);
    $("reason").value = "";
    const stateFilter = $("f-state").value;
    if (stateFilter !== "any") {
      state.items = state.items.filter((i) => i.id !== body.target);
      state.total = Math.max(0, state.total - 1);
    }
    if (stateFilter === "any" || !state.items.length || state.mine.length % REFRESH_EVERY === 0) {
      await loadQueue();
    } else {
      state.index = Math.min(state.index, state.items.length - 1);
      drawQueue();
      await openCurrent();
    }
    say(label + " · " + decision.id + " · " + Math.round(performance.now() - started) + " ms" +
      (body.action === "edit" ? await landing(body.target) : ""));
    document.body.dataset.decisions = String(state.mine.length);
  } catch (err) { say(String(err.message), true); }
}

const REFRESH_EVERY = 10;

function accept() {
  const c = state.current;
  if (!c) return;
  if (c.kind === "merge") return decide({ action: "confirm", target: c.id, reason: $("reason").value }, "confirmed");
  return decide({ action: "accept", target: c.id, reason: $("reason").value }, "accepted");
}

function askReason(then) {
  const dialog = $("reject-dialog");
  $("reject-reason").value = $("reason").value;
  dialog.onclose = () => { if (dialog.returnValue === "ok") then($("reject-reason").value); };
  dialog.showModal();
  $("reject-reason").focus();
}

function reject() {
  const c = state.current;
  if (!c) return;
  askReason((reason) => decide({ action: c.kind === "merge" ? "split" : "reject", target: c.id, reason },
    c.kind === "merge" ? "split" : "rejected"));
}

function edit() {
  const c = state.current;
  if (!c || c.kind !== "statement") return;
  const t = c.view.triple;
  // Names, not ids: the server takes a name (or an id) and says when one is ambiguous.
  $("e-head").value = c.view.head.name;
  $("e-tail").value = c.view.tail.name;
  $("e-predicate").value = t.predicate;
  $("e-negated").checked = t.qualifiers.negated;
  $("e-uncertain").checked = t.qualifiers.uncertain;
  $("e-reason").value = $("reason").value;
  $("edit-form").hidden = false;
  $("e-predicate").focus();
}

function saveEdit(ev) {
  ev.preventDefault();
  const c = state.current;
  const q = Object.assign({}, c.view.triple.qualifiers,
    { negated: $("e-negated").checked, uncertain: $("e-uncertain").checked });
  $("edit-form").hidden = true;
  decide({ action: "edit", target: c.id, reason: $("e-reason").value,
    edit: { head: $("e-head").value.trim(), predicate: $("e-predicate").value, tail: $("e-tail").value.trim(), qualifiers: q } }, "edited");
}

async function undo(id) {
  try {
    const d = await api("POST", "/api/review/" + encodeURIComponent(id) + "/undo", { reason: "" });
    say("undone · " + d.id);
    state.mine = state.mine.filter((x) => x !== id);
    route();
  } catch (err) { say(String(err.message), true); }
}

async function bulk(action) {
  const ids = state.items.filter((i) => state.selected.has(i.id));
  if (!ids.length) { say("select items first (x)", true); return; }
  const run = async (reason) => {
    const decisions = ids.map((i) => ({ target: i.id, reason,
      action: i.kind === "merge" ? (action === "accept" ? "confirm" : "split") : action }));
    try {
      const done = await api("POST", "/api/review/bulk", { decisions });
      done.forEach((d) => state.mine.push(d.id));
      state.selected.clear();
      await loadQueue();
      say(done.length + " decision(s) recorded");
      document.body.dataset.decisions = String(state.mine.length);
    } catch (err) { say(String(err.message), true); }
  };
  if (action === "reject") askReason(run); else run($("reason").value);
}

// -- entity, document, audit, ask --------------------------------------------

async function openEntity(id) {
  const pane = clear($("view-entity"));
  try {
    const view = await api("GET", "/api/entities/" + encodeURIComponent(id));
    const e = view.entity;
    pane.append(el("h2", {}, e.name + " ", el("span", { class: "muted", text: "(" + e.type + ", " + e.layer + ")" })),
      el("p", {}, el("code", { text: e.id }), " · mentioned in " + e.chunks + " chunk(s)"),
      el("h3", { text: "Concepts" }), concepts(e));
    pane.append(entityActions(e));
    pane.append(el("h3", { text: "Merges" }));
    const merges = el("ul", {});
    if (!view.merges.length) merges.append(el("li", { class: "muted", text: "none" }));
    for (const m of view.merges) {
      merges.append(el("li", {}, m.kind + " " + m.direction + " ",
        el("a", { href: "#/entity/" + encodeURIComponent(m.other), text: m.other_name }),
        " (" + m.method + ", " + m.score.toFixed(3) + ")"));
    }
    pane.append(merges, el("h3", { text: "Statements" }));
    const triples = el("ul", { class: "triples" });
    for (const t of view.triples) {
      triples.append(el("li", {}, el("span", { class: "badge state-" + t.state, text: t.state }), " ",
        el("a", { href: "#/statement/" + t.id, text: t.label })));
    }
    pane.append(triples, el("h3", { text: "Mentions" }));
    const mentions = el("ul", { class: "mentions" });
    for (const m of view.mentions) {
      mentions.append(el("li", {}, el("a", { href: "#/doc/" + encodeURIComponent(m.document_id) + "/" + m.start + "-" + m.end, text: m.text }),
        el("span", { class: "muted", text: " " + m.document_id + " " + m.start + "–" + m.end })));
    }
    pane.append(mentions, el("h3", { text: "History" }), historyList(view.history));
  } catch (err) { pane.append(el("p", { class: "error", text: String(err.message) })); }
}

const GROUPS = ["ACTI", "ANAT", "CHEM", "CONC", "DEVI", "DISO", "GENE", "GEOG", "LIVB", "OBJC",
  "OCCU", "ORGA", "PHEN", "PHYS", "PROC"];

function entityActions(e) {
  // Rename, retype, renormalise: each a decision with a reason, kept in the audit log.
  const name = el("input", { id: "ent-name", maxlength: "300", "aria-label": "new name" });
  name.value = e.name;
  const type = el("select", { id: "ent-type", "aria-label": "new type" });
  for (const g of GROUPS) type.append(el("option", { value: g, text: g }));
  type.value = e.type;
  const ids = el("input", { id: "ent-concepts", placeholder: "concept ids, e.g. DOID:9352", "aria-label": "concept ids" });
  ids.value = e.concepts.map((c) => c.id).join(" ");
  const reason = el("input", { id: "ent-reason", placeholder: "reason", maxlength: "2000", "aria-label": "reason" });
  const after = async (body, label) => {
    try {
      const d = await api("POST", "/api/review", Object.assign({ target: e.id, reason: reason.value }, body));
      state.mine.push(d.id);
      openEntity(e.id).then(() => { const s = document.querySelector("#view-entity .entity-status"); if (s) s.textContent = label + " · " + d.id; });
    } catch (err) { status.textContent = String(err.message); status.className = "entity-status error"; }
  };
  const status = el("p", { class: "entity-status", role: "status" });
  return el("form", { class: "entity-actions", onsubmit: (ev) => ev.preventDefault() },
    el("label", {}, "name ", name), el("button", { type: "button", id: "ent-rename", text: "Rename",
      onclick: () => after({ action: "rename", values: { name: name.value } }, "renamed") }),
    el("label", {}, "type ", type), el("button", { type: "button", id: "ent-retype", text: "Retype",
      onclick: () => after({ action: "retype", values: { type: type.value } }, "retyped") }),
    el("label", {}, "concepts ", ids), el("button", { type: "button", id: "ent-renormalise", text: "Renormalise",
      onclick: () => after({ action: "renormalise", values: { concept_ids: ids.value.split(/[\s,]+/).filter(Boolean) } }, "renormalised") }),
    el("label", {}, "reason ", reason), status);
}

async function openDocument(id, span) {
  const pane = clear($("view-doc"));
  try {
    const doc = await api("GET", "/api/documents/" + encodeURIComponent(id));
    const [start, end] = span.split("-").map((x) => parseInt(x, 10));
    pane.append(el("h2", { text: doc.title }), el("p", { class: "muted" }, doc.layer + " · " + doc.source + " · ", el("code", { text: doc.id })));
    const text = el("pre", { class: "document" });
    if (Number.isInteger(start) && Number.isInteger(end) && start <= end) {
      const here = el("mark", { id: "here", text: doc.text.slice(start, end) });
      text.append(document.createTextNode(doc.text.slice(0, start)), here, document.createTextNode(doc.text.slice(end)));
      pane.append(text);
      here.scrollIntoView({ block: "center" });
    } else {
      text.textContent = doc.text;
      pane.append(text);
    }
  } catch (err) { pane.append(el("p", { class: "error", text: String(err.message) })); }
}

async function openAudit() {
  const pane = clear($("view-audit"));
  try {
    const decisions = await api("GET", "/api/audit");
    pane.append(el("h2", { text: "Audit log · " + decisions.length + " decision(s)" }));
    const table = el("table", { class: "audit" }, el("tr", {}, ...["when (UTC)", "reviewer", "action", "target", "reason", "decision"].map((h) => el("th", { text: h }))));
    for (const d of decisions) {
      const target = d.target_kind === "statement" ? el("a", { href: "#/statement/" + d.target, text: d.target })
        : el("a", { href: "#/entity/" + encodeURIComponent(d.target), text: d.target });
      table.append(el("tr", {}, el("td", { text: d.at.replace("T", " ").slice(0, 19) }), el("td", { text: d.reviewer }),
        el("td", { text: d.undoes ? "undo " + d.undoes : d.action }), el("td", {}, d.target_kind + " ", target),
        el("td", { text: d.reason }), el("td", {}, el("code", { text: d.id }))));
    }
    pane.append(table);
  } catch (err) { pane.append(el("p", { class: "error", text: String(err.message) })); }
}

async function ask(ev) {
  ev.preventDefault();
  const pane = clear($("answer"));
  pane.append(el("p", { class: "muted", text: "Searching the graph…" }));
  try {
    const a = await api("POST", "/api/ask", { question: $("ask-input").value });
    clear(pane);
    const body = el("div", { class: "answer-text" });
    // A quote's qualifiers (family history, negated, hedged, ...) beside it, always.
    const flagsOf = {};
    for (const c of a.citations) flagsOf[c.n] = c.flags || [];
    const flagged = (n) => flagsOf[n] && flagsOf[n].length ?
      [" ", el("span", { class: "flags", text: "(" + flagsOf[n].join("; ") + ")" })] : [];
    if (a.sentences && a.sentences.length) {
      for (const s of a.sentences) body.append(el("p", { class: "sentence layer-" + s.layer }, s.text + " ", el("sup", { text: "[" + s.citation + "]" }), ...flagged(s.citation)));
    } else body.append(el("p", { text: a.text }));
    pane.append(body);
    if (a.conditions && a.conditions.length) {
      pane.append(el("h3", { text: "When this holds" }));
      const conds = el("ul", { class: "conditions" });
      for (const c of a.conditions) {
        const doubt = c.unreviewed ? " (unreviewed, low confidence)" : "";
        conds.append(el("li", {}, el("strong", { text: c.kind + doubt + ": " }), c.text + " ",
          el("sup", { text: c.citations.map((n) => "[" + n + "]").join("") })));
      }
      pane.append(conds);
    }
    pane.append(el("h3", { text: "Citations" }));
    const cites = el("ol", { class: "citations" });
    for (const c of a.citations) {
      cites.append(el("li", { value: String(c.n) }, el("a", { href: "#/doc/" + encodeURIComponent(c.document_id) + "/" + c.start + "-" + c.end, text: c.title || c.document_id }),
        " (" + c.layer + "): ", el("q", { text: c.quote }), ...flagged(c.n)));
    }
    pane.append(cites);
    if (a.facts.length) {
      pane.append(el("h3", { text: "Facts" }));
      const facts = el("ul", {});
      for (const f of a.facts) {
        facts.append(el("li", {}, el("a", { href: "#/statement/" + f.triple_id, text: f.head + " —" + f.predicate + "→ " + f.tail }), " [" + f.layer + "]"));
      }
      pane.append(facts);
    }
    if (a.proposed && a.proposed.length) {
      pane.append(el("h3", { text: "Unreviewed, low confidence (not facts)" }));
      const proposed = el("ul", { class: "proposed" });
      for (const f of a.proposed) {
        proposed.append(el("li", {}, el("a", { href: "#/statement/" + f.triple_id, text: f.head + " —" + f.predicate + "→ " + f.tail }), " [" + f.layer + ", confidence " + f.confidence.toFixed(2) + "]"));
      }
      pane.append(proposed);
    }
    if (a.definitions.length) {
      pane.append(el("h3", { text: "Definitions" }));
      const defs = el("dl", {});
      for (const d of a.definitions) defs.append(el("dt", { text: d.term + " (" + d.concept_id + ")" }), el("dd", { text: d.definition || "" }));
      pane.append(defs);
    }
  } catch (err) { clear(pane).append(el("p", { class: "error", text: String(err.message) })); }
}

// -- keys and start -----------------------------------------------------------

function move(step) {
  if (!state.items.length) return;
  state.index = Math.max(0, Math.min(state.items.length - 1, state.index + step));
  drawQueue();
  openCurrent();
}

function onKey(ev) {
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const tag = (ev.target.tagName || "").toLowerCase();
  if (tag === "input" || tag === "select" || tag === "textarea" || document.querySelector("dialog[open]")) return;
  if (ev.key === "?") { $("help").showModal(); ev.preventDefault(); return; }
  if ($("view-queue").hidden) return;
  const keys = {
    j: () => move(1), ArrowDown: () => move(1), k: () => move(-1), ArrowUp: () => move(-1),
    a: accept, r: reject, e: edit, A: () => bulk("accept"), R: () => bulk("reject"),
    x: () => { const i = state.items[state.index]; if (i) toggle(i.id); },
    u: () => { const last = state.mine[state.mine.length - 1]; if (last) undo(last); else say("nothing of yours to undo", true); },
    o: () => { const c = state.current; if (c && c.kind === "statement") location.hash = "#/entity/" + encodeURIComponent(c.view.head.id); },
    "/": () => $("f-entity").focus(),
  };
  const action = keys[ev.key];
  if (action) { ev.preventDefault(); action(); }
}

function start() {
  for (const p of PREDICATES) {
    $("f-predicate").append(el("option", { value: p, text: p }));
    $("e-predicate").append(el("option", { value: p, text: p }));
  }
  $("signin-form").addEventListener("submit", (ev) => { ev.preventDefault(); signIn($("token-input").value.trim()); });
  $("filters").addEventListener("change", () => { state.index = 0; loadQueue(); });
  $("filters").addEventListener("submit", (ev) => { ev.preventDefault(); state.index = 0; loadQueue(); });
  $("do-accept").addEventListener("click", accept);
  $("do-reject").addEventListener("click", reject);
  $("do-edit").addEventListener("click", edit);
  $("do-confirm").addEventListener("click", accept);
  $("do-split").addEventListener("click", reject);
  $("bulk-accept").addEventListener("click", () => bulk("accept"));
  $("bulk-reject").addEventListener("click", () => bulk("reject"));
  $("edit-form").addEventListener("submit", saveEdit);
  $("e-cancel").addEventListener("click", () => { $("edit-form").hidden = true; });
  $("ask-form").addEventListener("submit", ask);
  $("help-button").addEventListener("click", () => $("help").showModal());
  document.addEventListener("keydown", onKey);
  window.addEventListener("hashchange", () => { if (state.token) route(); });
  // A token in the address (#token=...) is taken and removed from it at once.
  const m = location.hash.match(/token=([^&]+)/);
  if (m) {
    history.replaceState(null, "", location.pathname + "#/queue");
    signIn(decodeURIComponent(m[1]));
  } else if (state.token) signIn(state.token);
  else signOut("");
}

document.addEventListener("DOMContentLoaded", start);
