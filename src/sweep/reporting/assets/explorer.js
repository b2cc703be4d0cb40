/* sweep's explorer: every question x every setting, two settings side by side, any
 * document's chunk boundaries, deep links. Plain JS, no library, no network.
 *
 * Safe by construction: every string that comes from the data (documents, questions, ids,
 * settings) reaches the page through textContent, createTextNode or setAttribute, never
 * as markup; so a question whose text is a <script> shows as that text and never runs.
 */
(function () {
  "use strict";

  // question rows drawn at once: on a 2-core machine 200 rows x 12 marks took ~90 ms to lay
  // out after a filter change, 100 rows stay well under the 100 ms a click should take
  const PAGE = 100;
  // typing in a filter redraws once the user pauses
  const DEBOUNCE_MS = 150;
  const PART = 4000; // characters of a document laid out as one block (see drawBoundaries)

  // ---- small DOM helpers (text only) ------------------------------------------------------

  // el("a", {href: "#x", class: "y"}, "text", node, ...): attributes by setAttribute,
  // string children as text nodes; null/false children are skipped.
  function el(tag, attrs) {
    const node = document.createElement(tag);
    if (attrs) {
      for (const key of Object.keys(attrs)) {
        const v = attrs[key];
        if (v === null || v === undefined || v === false) continue;
        node.setAttribute(key, String(v));
      }
    }
    for (let i = 2; i < arguments.length; i++) add(node, arguments[i]);
    return node;
  }

  function add(node, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) {
      for (const c of child) add(node, c);
    } else if (typeof child === "string" || typeof child === "number") {
      node.appendChild(document.createTextNode(String(child)));
    } else {
      node.appendChild(child);
    }
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  function fmt(v, digits) {
    return v === null || v === undefined ? "—" : Number(v).toFixed(digits === undefined ? 3 : digits);
  }

  function debounce(fn, ms) {
    let timer = 0;
    return function () {
      clearTimeout(timer);
      timer = setTimeout(fn, ms);
    };
  }

  // ---- the data ---------------------------------------------------------------------------

  function readData() {
    const script = document.getElementById("sweep-explorer-data");
    if (script) {
      const parsed = JSON.parse(script.textContent || "null");
      if (parsed) return parsed;
    }
    if (window.sweepExplorerData) return window.sweepExplorerData;
    return null;
  }

  function sidecarName() {
    const meta = document.querySelector('meta[name="sweep-explorer-sidecar"]');
    return (meta && meta.getAttribute("content")) || "report-data.js";
  }

  // Everything derived from the data once: lookups by id and the per-job, per-document
  // chunk lists (built on first use: a 300-document sweep opens without building 300 lists).
  function index(D) {
    const X = {D: D, jobByNum: new Map(), docById: new Map(), qById: new Map()};
    D.jobs.forEach((j, i) => X.jobByNum.set(String(j.job), i));
    // one id may name a document of each dataset (two readers of one PDF) and a question
    // of each evaluation set: a link's job says which one
    const many = (map, key, i) => {
      for (const k of new Set([key, linkId(key)])) {
        if (map.has(k)) map.get(k).push(i);
        else map.set(k, [i]);
      }
    };
    D.docs.forEach((d, i) => many(X.docById, d.id, i));
    D.questions.forEach((q, i) => many(X.qById, q.id, i));
    X.datasets = D.datasets && D.datasets.length > 1 ? D.datasets : null;
    X.types = Array.from(new Set(D.questions.map((q) => q.type).filter((t) => t))).sort();
    X.mean = D.jobs.map((_, ji) => {
      let sum = 0;
      let n = 0;
      for (const q of D.questions) {
        const v = q.outcome[ji];
        if (v !== null && v !== undefined) {
          sum += v;
          n += 1;
        }
      }
      return n ? sum / n : -1;
    });
    X.chunksOf = new Map(); // "ji:doc" -> passage indices of the job's chunks in that doc
    X.goldOf = null; // doc -> [{q, g, start, end}] over all questions, built on first use
    let pick = D.jobs.findIndex((j) => j.pick);
    if (pick < 0) pick = D.jobs.findIndex((j) => j.ok);
    if (pick < 0) pick = 0;
    X.defA = pick;
    // b: the best other setting by its mean outcome, else the next one
    let best = -1;
    D.jobs.forEach((j, i) => {
      if (i !== pick && j.ok && (best < 0 || X.mean[i] > X.mean[best])) best = i;
    });
    X.defB = best >= 0 ? best : D.jobs.length > 1 ? (pick + 1) % D.jobs.length : pick;
    return X;
  }

  // The document or question with this id in job ji's dataset, else the first with it.
  function byIdFor(X, map, id, ji) {
    const all = map.get(id);
    if (!all) return undefined;
    const ds = ji >= 0 && X.D.jobs[ji] ? X.D.jobs[ji].dataset : undefined;
    const own = all.find((i) => {
      const item = map === X.docById ? X.D.docs[i] : X.D.questions[i];
      return item.dataset === ds;
    });
    return own === undefined ? all[0] : own;
  }

  // "doc.pdf" or, when the sweep read its files more than one way, "doc.pdf (pypdf)"
  function docName(X, doc) {
    const d = X.D.docs[doc];
    return X.datasets && d.dataset !== undefined ? d.id + " (" + X.datasets[d.dataset].label + ")" : d.id;
  }

  function passagesOf(X, ji) {
    return X.D.passages[String(X.D.jobs[ji].job)] || null;
  }

  function hitsOf(X, ji) {
    return X.D.hits[String(X.D.jobs[ji].job)] || null;
  }

  function chunksIn(X, ji, doc) {
    const key = ji + ":" + doc;
    if (X.chunksOf.has(key)) return X.chunksOf.get(key);
    const P = passagesOf(X, ji);
    if (!P) return [];
    // one pass over the job's chunks fills every document's list
    const byDoc = new Map();
    for (let p = 0; p < P.n_chunks; p++) {
      const d = P.doc[p];
      if (!byDoc.has(d)) byDoc.set(d, []);
      byDoc.get(d).push(p);
    }
    X.D.docs.forEach((_, d) => {
      const list = byDoc.get(d) || [];
      list.sort((a, b) => P.start[a] - P.start[b] || P.end[a] - P.end[b]);
      X.chunksOf.set(ji + ":" + d, list);
    });
    return X.chunksOf.get(key);
  }

  function goldIn(X, doc) {
    if (!X.goldOf) {
      X.goldOf = new Map();
      X.D.questions.forEach((q, qi) => {
        q.gold.forEach((g, gi) => {
          if (!X.goldOf.has(g.doc)) X.goldOf.set(g.doc, []);
          X.goldOf.get(g.doc).push({q: qi, g: gi, start: g.start, end: g.end});
        });
      });
    }
    return X.goldOf.get(doc) || [];
  }

  function passageText(X, ji, p) {
    const P = passagesOf(X, ji);
    const t = P.text && P.text[p];
    if (t !== null && t !== undefined) return t;
    const doc = X.D.docs[P.doc[p]];
    return doc.text === null ? null : doc.text.slice(P.start[p], P.end[p]);
  }

  function pagesOf(X, doc, s, e) {
    const pages = X.D.docs[doc].pages;
    if (!pages || !pages.length) return "";
    let first = -1;
    let last = -1;
    for (let i = 0; i < pages.length; i++) {
      if (pages[i][1] > s && pages[i][0] < Math.max(e, s + 1)) {
        if (first < 0) first = i;
        last = i;
      }
    }
    if (first < 0) return "";
    return first === last ? "p. " + (first + 1) : "pp. " + (first + 1) + "–" + (last + 1);
  }

  // The pages of doc that both [s, e) and the evidence [gs, ge) share a character with, as
  // "p. 3" or "pp. 3, 4" ("" if none): the page level credits a chunk on a page the evidence
  // lies on, even where it holds none of the evidence's characters.
  function sharedPages(X, doc, s, e, gs, ge) {
    const pages = X.D.docs[doc].pages;
    if (!pages || !pages.length) return "";
    const on = [];
    pages.forEach((p, i) => {
      if (p[0] < p[1] && p[0] < e && s < p[1] && p[0] < ge && gs < p[1]) on.push(i + 1);
    });
    return on.length ? (on.length === 1 ? "p. " : "pp. ") + on.join(", ") : "";
  }

  function jobName(X, ji) {
    const j = X.D.jobs[ji];
    return "#" + j.job + " " + j.label + (j.ok ? "" : " (" + j.status + ")");
  }

  function markOf(v) {
    if (v === null || v === undefined) return ["none", "not scored"];
    if (v >= 1) return ["full", "found"];
    if (v > 0) return ["part", "partly found"];
    return ["miss", "missed"];
  }

  // ---- links ------------------------------------------------------------------------------

  // A lone surrogate (an id read from a file name that is not UTF-8) has no URL form:
  // encodeURIComponent throws on it, so such an id goes into links as U+FFFD (linkId), and
  // is found by that form too.
  function linkId(s) {
    try {
      encodeURIComponent(s);
      return String(s);
    } catch (e) {
      return String(s).replace(/[\ud800-\udfff]/g, "\ufffd");
    }
  }
  function enc(s) {
    return encodeURIComponent(linkId(s));
  }

  function jobNum(X, ji) {
    return X.D.jobs[ji].job;
  }

  function qLink(X, qi, a, b) {
    return "#question=" + enc(X.D.questions[qi].id) + "&a=" + jobNum(X, a) + "&b=" + jobNum(X, b);
  }

  function dLink(X, doc, ji, chunkId) {
    return (
      "#document=" + enc(X.D.docs[doc].id) + "&job=" + jobNum(X, ji) + (chunkId ? "&chunk=" + enc(chunkId) : "")
    );
  }

  function listHash(X, st) {
    let h = "#questions&a=" + jobNum(X, st.a) + "&b=" + jobNum(X, st.b);
    if (st.filter && st.filter !== "all") h += "&filter=" + enc(st.filter);
    if (st.type) h += "&type=" + enc(st.type);
    if (st.q) h += "&q=" + enc(st.q);
    if (st.page) h += "&page=" + (st.page + 1);
    return h;
  }

  // "#question=q1&a=0&b=3" -> {view: "question", question: "q1", a: "0", b: "3"}; null for a
  // hash that is not the explorer's (a section's anchor, a picture's zoom).
  function parseHash(hash) {
    const h = hash.replace(/^#/, "");
    if (!h) return null;
    const out = {};
    let view = null;
    for (const part of h.split("&")) {
      const eq = part.indexOf("=");
      const key = eq < 0 ? part : part.slice(0, eq);
      let value = "";
      try {
        value = eq < 0 ? "" : decodeURIComponent(part.slice(eq + 1));
      } catch (e) {
        value = part.slice(eq + 1);
      }
      if (view === null) view = key;
      out[key] = value;
    }
    if (view !== "question" && view !== "document" && view !== "questions") return null;
    out.view = view;
    return out;
  }

  // a job given in a link (results.csv's job number) -> job index, or -1 when unknown
  function jobFrom(X, value, fallback) {
    if (value === undefined || value === "") return fallback;
    const ji = X.jobByNum.get(value);
    return ji === undefined ? -1 : ji;
  }

  // a select over indices (of jobs, of documents): onChange gets the chosen index
  function indexSelect(names, selected, onChange, label) {
    const sel = el("select", {"aria-label": label});
    names.forEach((name, i) => {
      const o = el("option", {value: String(i)}, name);
      if (i === selected) o.selected = true;
      sel.appendChild(o);
    });
    sel.addEventListener("change", () => onChange(Number(sel.value)));
    return sel;
  }

  function jobSelect(X, selected, onChange, label) {
    return indexSelect(X.D.jobs.map((_, i) => jobName(X, i)), selected, onChange, label);
  }

  function message(view, text, X) {
    clear(view);
    view.appendChild(
      el("p", {class: "x-msg", role: "status"}, text + " ", X ? el("a", {href: "#questions"}, "all questions") : null),
    );
  }

  // ---- the results table ------------------------------------------------------------------

  // A metric's cell colour: value 0 -> white, 1 -> dark blue, on a fixed 0-1 scale, so a tie
  // between 0.959 and 1.000 looks like the near-tie it is.
  function metricColour(v) {
    const x = Math.max(0, Math.min(1, v));
    const light = 97 - 52 * x;
    return ["hsl(212, 60%, " + light.toFixed(1) + "%)", light < 62 ? "#fff" : "#111"];
  }

  function resultsTable(X, go) {
    const host = document.getElementById("results-table");
    const T = X.D.table;
    if (!host || !T || !T.columns) return;
    const cols = T.columns;
    const settingCols = cols.map((c, i) => (c.kind === "setting" ? i : -1)).filter((i) => i >= 0);
    const state = {col: -1, dir: 1, filter: ""};
    const wrap = el("div", {class: "x-scroll"});
    const filter = el("input", {
      type: "search",
      class: "x-input",
      placeholder: "filter settings",
      "aria-label": "filter the table by its settings",
    });
    const count = el("span", {class: "x-count"});
    const table = el("table", {class: "x-results"});
    const thead = el("thead");
    const tbody = el("tbody");
    const headRow = el("tr");
    const heads = [];
    cols.forEach((c, ci) => {
      const btn = el("button", {type: "button", class: "x-sort", title: "sort by " + c.name}, c.name);
      btn.addEventListener("click", () => {
        state.dir = state.col === ci ? -state.dir : c.kind === "metric" || c.kind === "number" ? -1 : 1;
        state.col = ci;
        draw();
      });
      const th = el("th", {scope: "col"}, btn);
      heads.push(th);
      headRow.appendChild(th);
    });
    headRow.appendChild(el("th", {scope: "col"}, "compare"));
    thead.appendChild(headRow);
    table.appendChild(thead);
    table.appendChild(tbody);

    const rows = T.rows.map((r) => {
      const ji = X.jobByNum.has(String(r.job)) ? X.jobByNum.get(String(r.job)) : -1;
      const tr = el("tr", {class: r.class || null});
      r.cells.forEach((cell, ci) => {
        const kind = cols[ci].kind;
        const v = r.values ? r.values[ci] : null;
        const td = el("td", {class: kind === "metric" || kind === "number" ? "num" : null}, cell);
        if (kind === "metric" && typeof v === "number") {
          const c = metricColour(v);
          td.style.background = c[0];
          td.style.color = c[1];
          const lo = r.low ? r.low[ci] : null;
          const hi = r.high ? r.high[ci] : null;
          if (lo !== null && lo !== undefined && hi !== null && hi !== undefined) {
            td.setAttribute("title", cols[ci].name + " " + fmt(v) + ", interval " + fmt(lo) + " – " + fmt(hi));
            // the interval as a bar on the same 0-1 scale
            const bar = el("span", {class: "x-ci", "aria-hidden": "true"});
            bar.style.left = (100 * Math.max(0, lo)).toFixed(1) + "%";
            bar.style.width = (100 * Math.max(0, Math.min(1, hi) - Math.max(0, lo))).toFixed(1) + "%";
            td.appendChild(el("span", {class: "x-citrack", "aria-hidden": "true"}, bar));
          }
        }
        if (ci === 0 && (r.class || "").split(" ").indexOf("pick") >= 0) {
          td.appendChild(el("span", {class: "x-badge"}, "recommended"));
        }
        tr.appendChild(td);
      });
      const cmp = el("td", {class: "x-nowrap"});
      if (ji >= 0) {
        const asA = el("button", {type: "button", class: "x-small", title: "compare as setting a"}, "a");
        const asB = el("button", {type: "button", class: "x-small", title: "compare as setting b"}, "b");
        asA.addEventListener("click", () => go.setAB(ji, null));
        asB.addEventListener("click", () => go.setAB(null, ji));
        cmp.appendChild(asA);
        cmp.appendChild(asB);
      }
      tr.appendChild(cmp);
      const text = settingCols.map((ci) => cols[ci].name + "=" + r.cells[ci]).join(" ").toLowerCase() +
        " " + (ji >= 0 ? X.D.jobs[ji].label.toLowerCase() : "");
      return {r: r, tr: tr, text: text};
    });

    function draw() {
      const f = state.filter.trim().toLowerCase();
      let shown = rows.filter((row) => !f || row.text.indexOf(f) >= 0);
      if (state.col >= 0) {
        const ci = state.col;
        const key = (row) => {
          const v = row.r.values ? row.r.values[ci] : null;
          return v === null || v === undefined ? row.r.cells[ci] : v;
        };
        shown = shown.slice().sort((p, q) => {
          const a = key(p);
          const b = key(q);
          if (typeof a === "number" && typeof b === "number") return state.dir * (a - b);
          if (typeof a === "number") return -1;
          if (typeof b === "number") return 1;
          return state.dir * String(a).localeCompare(String(b), undefined, {numeric: true});
        });
      }
      heads.forEach((th, ci) => {
        th.setAttribute("aria-sort", ci !== state.col ? "none" : state.dir > 0 ? "ascending" : "descending");
      });
      clear(tbody);
      const frag = document.createDocumentFragment();
      for (const row of shown) frag.appendChild(row.tr);
      tbody.appendChild(frag);
      count.textContent = shown.length + " of " + rows.length + " settings";
    }
    filter.addEventListener("input", debounce(() => {
      state.filter = filter.value;
      draw();
    }, DEBOUNCE_MS));
    draw();
    clear(host);
    wrap.appendChild(table);
    host.appendChild(
      el("div", {class: "x-bar"}, filter, count, el("span", {class: "x-note"},
        "Click a header to sort; metric cells are shaded on a fixed 0–1 scale, the bar under each is its interval.")),
    );
    host.appendChild(wrap);
  }

  // ---- the question list ------------------------------------------------------------------

  function questionList(X, view, p, go) {
    const D = X.D;
    const st = {
      a: jobFrom(X, p.a, X.defA),
      b: jobFrom(X, p.b, X.defB),
      filter: p.filter || "all",
      type: p.type || "",
      q: p.q || "",
      // 1-based in the address, so Back from a question returns to the page it was on
      page: Math.max(0, (parseInt(p.page, 10) || 1) - 1),
    };
    if (st.a < 0 || st.b < 0) {
      message(view, "No setting with job number " + (st.a < 0 ? p.a : p.b) + " in this sweep.", X);
      return;
    }
    go.remember(st.a, st.b);
    clear(view);
    const head = el("h3", {class: "x-title", tabindex: "-1"}, "Questions");
    const typeSel = el("select", {"aria-label": "question type"}, el("option", {value: ""}, "every type"));
    for (const t of X.types) {
      const o = el("option", {value: t}, t);
      if (t === st.type) o.selected = true;
      typeSel.appendChild(o);
    }
    const text = el("input", {
      type: "search",
      class: "x-input",
      placeholder: "text or id",
      "aria-label": "filter questions by text",
      value: st.q,
    });
    const outcomes = [
      ["all", "every outcome"],
      ["found", "found by a"],
      ["missed", "missed by a"],
      ["flipped", "flipped between a and b"],
      ["unanswerable", "unanswerable"],
    ];
    const outSel = el("select", {"aria-label": "outcome"});
    for (const o of outcomes) {
      const opt = el("option", {value: o[0]}, o[1]);
      if (o[0] === st.filter) opt.selected = true;
      outSel.appendChild(opt);
    }
    const aSel = jobSelect(X, st.a, (v) => { st.a = v; changed(); }, "setting a");
    const bSel = jobSelect(X, st.b, (v) => { st.b = v; changed(); }, "setting b");
    const count = el("p", {class: "x-count", role: "status"});
    const paired = el("p", {class: "x-paired"});
    const tbody = el("tbody");
    const jobHeads = D.jobs.map((j) => j.job);
    const table = el(
      "table",
      {class: "x-qlist"},
      el("thead", null, el("tr", null,
        el("th", {scope: "col"}, "id"),
        el("th", {scope: "col"}, "type"),
        el("th", {scope: "col"}, "question"),
        el("th", {scope: "col", title: "one mark per setting, in job order " + jobHeads.join(", ")}, "settings"))),
      tbody,
    );
    // the marks' column is as wide as its marks (1.05rem each), the question takes the rest
    table.querySelector("th:last-child").style.width = Math.max(5, 1.05 * D.jobs.length + 1).toFixed(2) + "rem";
    const prev = el("button", {type: "button"}, "← previous");
    const next = el("button", {type: "button"}, "next →");
    const range = el("span", {class: "x-note"});
    const pager = el("div", {class: "x-pager"}, prev, next, range);
    const turn = (by) => {
      st.page += by;
      draw();
      history.replaceState(null, "", listHash(X, st));
    };
    prev.addEventListener("click", () => turn(-1));
    next.addEventListener("click", () => turn(1));

    view.appendChild(head);
    view.appendChild(el("div", {class: "x-filters"},
      el("label", null, "type ", typeSel),
      el("label", null, "text ", text),
      el("label", null, "outcome ", outSel),
      el("label", null, "a ", aSel),
      el("label", null, "b ", bSel)));
    view.appendChild(el("p", {class: "x-legend"},
      el("span", {class: "x-mark full"}), " found ",
      el("span", {class: "x-mark part"}), " partly found ",
      el("span", {class: "x-mark miss"}), " missed ",
      el("span", {class: "x-mark none"}), " not scored; one mark per setting (",
      D.primary ? D.primary.label : "the primary metric", "); a and b outlined."));
    view.appendChild(count);
    view.appendChild(paired);
    view.appendChild(el("div", {class: "x-scroll"}, table));
    view.appendChild(pager);

    let shown = [];

    function matches(q) {
      if (st.type && q.type !== st.type) return false;
      if (st.q) {
        const f = st.q.toLowerCase();
        if (q.id.toLowerCase().indexOf(f) < 0 && (q.text || "").toLowerCase().indexOf(f) < 0) return false;
      }
      const va = q.outcome[st.a];
      const vb = q.outcome[st.b];
      switch (st.filter) {
        case "found":
          return va !== null && va > 0;
        case "missed":
          return va === 0;
        case "flipped":
          return va !== null && vb !== null && (va > 0) !== (vb > 0);
        case "unanswerable":
          return !q.answerable;
        default:
          return true;
      }
    }

    function changed() {
      st.page = 0;
      // the list's filters live in the address (replaced, not pushed: typing is not a
      // view change), so Back from a question returns to the same filtered list
      history.replaceState(null, "", listHash(X, st));
      go.remember(st.a, st.b);
      filterAll();
      draw(true);
    }

    function filterAll() {
      shown = [];
      let aBetter = 0;
      let bBetter = 0;
      let equal = 0;
      D.questions.forEach((q, qi) => {
        if (!matches(q)) return;
        shown.push(qi);
        const va = q.outcome[st.a];
        const vb = q.outcome[st.b];
        if (va === null || vb === null || va === undefined || vb === undefined) return;
        if (va > vb) aBetter += 1;
        else if (vb > va) bBetter += 1;
        else equal += 1;
      });
      count.textContent = shown.length + " of " + D.questions.length + " questions";
      paired.textContent = "On these, a (" + jobName(X, st.a) + ") better on " + aBetter +
        ", b (" + jobName(X, st.b) + ") better on " + bBetter + ", equal on " + equal + ".";
    }

    // rows already drawn for this a and b are reused: a filter change only re-orders nodes
    let rowCache = new Map();
    let cacheAB = "";

    function row(qi) {
      const ab = st.a + ":" + st.b;
      if (ab !== cacheAB) {
        rowCache = new Map();
        cacheAB = ab;
      }
      if (!rowCache.has(qi)) rowCache.set(qi, makeRow(qi));
      return rowCache.get(qi);
    }

    function makeRow(qi) {
      const q = D.questions[qi];
      const marks = el("td", {class: "x-marks"});
      q.outcome.forEach((v, ji) => {
        const m = markOf(v);
        const cls = "x-mark " + m[0] + (ji === st.a ? " a" : ji === st.b ? " b" : "");
        const say = D.jobs[ji].label + ": " + (v === null || v === undefined ? m[1] : fmt(v) + " (" + m[1] + ")");
        marks.appendChild(el("span", {class: cls, title: say, role: "img", "aria-label": say}));
      });
      return el("tr", null,
        el("td", {class: "x-id", title: q.id}, el("a", {href: qLink(X, qi, st.a, st.b)}, q.id)),
        el("td", null, q.type || ""),
        el("td", {class: "x-clip", title: q.text}, q.text),
        marks);
    }

    function draw() {
      const pages = Math.max(1, Math.ceil(shown.length / PAGE));
      st.page = Math.max(0, Math.min(st.page, pages - 1));
      const from = st.page * PAGE;
      const to = Math.min(shown.length, from + PAGE);
      const frag = document.createDocumentFragment();
      for (let i = from; i < to; i++) frag.appendChild(row(shown[i]));
      clear(tbody);
      tbody.appendChild(frag);
      prev.disabled = st.page === 0;
      next.disabled = st.page >= pages - 1;
      range.textContent = shown.length ? "rows " + (from + 1) + "–" + to + " of " + shown.length : "";
      prev.hidden = next.hidden = pages === 1;
    }

    typeSel.addEventListener("change", () => { st.type = typeSel.value; changed(); });
    outSel.addEventListener("change", () => { st.filter = outSel.value; changed(); });
    text.addEventListener("input", debounce(() => { st.q = text.value; changed(); }, DEBOUNCE_MS));
    filterAll();
    draw();
  }

  // ---- a passage's text with gold parts marked and the part past the window greyed -------

  // Cuts [0, len) at every gold edge and at the window; each piece is plain text, <mark>ed
  // when inside gold, inside a grey span when past the model's window.
  function markedText(text, golds, win) {
    const frag = document.createDocumentFragment();
    const cuts = new Set([0, text.length]);
    for (const g of golds) {
      cuts.add(Math.max(0, Math.min(text.length, g[0])));
      cuts.add(Math.max(0, Math.min(text.length, g[1])));
    }
    if (win >= 0 && win < text.length) cuts.add(win);
    const pts = Array.from(cuts).sort((x, y) => x - y);
    let pastBox = null;
    for (let i = 0; i + 1 < pts.length; i++) {
      const s = pts[i];
      const e = pts[i + 1];
      if (s >= e) continue;
      let node = document.createTextNode(text.slice(s, e));
      if (golds.some((g) => g[0] <= s && e <= g[1])) node = el("mark", null, node);
      if (win >= 0 && s >= win) {
        if (!pastBox) {
          pastBox = el("span", {class: "x-past", title: "past the model's window: never embedded"});
          frag.appendChild(pastBox);
        }
        pastBox.appendChild(node);
      } else {
        frag.appendChild(node);
      }
    }
    return frag;
  }

  // ---- the question view ------------------------------------------------------------------

  function questionView(X, view, p, go) {
    const D = X.D;
    const qi = byIdFor(X, X.qById, p.question, jobFrom(X, p.a, X.defA));
    if (qi === undefined) {
      message(view, "No question with id “" + p.question + "” in this report.", X);
      return;
    }
    const a = jobFrom(X, p.a, X.defA);
    const b = jobFrom(X, p.b, X.defB);
    if (a < 0 || b < 0) {
      message(view, "No setting with job number " + (a < 0 ? p.a : p.b) + " in this sweep.", X);
      return;
    }
    go.remember(a, b);
    const q = D.questions[qi];
    clear(view);
    view.appendChild(el("p", {class: "x-crumbs"},
      el("a", {href: listHash(X, {a: a, b: b})}, "← all questions")));
    view.appendChild(el("h3", {class: "x-title", tabindex: "-1"}, "Question " + q.id,
      q.type ? el("span", {class: "x-tag"}, q.type) : null));
    view.appendChild(el("p", {class: "x-qtext"}, q.text));
    if (q.reference) view.appendChild(el("p", {class: "x-ref"}, el("b", null, "Reference answer: "), q.reference));
    if (q.source) view.appendChild(el("p", {class: "x-note"}, "Source: " + q.source));

    // its evidence
    const ev = el("div", {class: "x-evidence"});
    if (!q.gold.length) {
      ev.appendChild(el("p", {class: "x-note"}, "No gold evidence: this question is not scored."));
    }
    q.gold.forEach((g, gi) => {
      const doc = D.docs[g.doc];
      const whole = g.start === null || g.start === undefined;
      const line = el("p", {class: "x-gold"},
        el("b", null, "gold " + (gi + 1)), " in ",
        el("a", {href: dLink(X, g.doc, a)}, docName(X, g.doc)),
        g.pages ? ", p. " + g.pages : "",
        whole ? " (the whole document)" : ", characters " + g.start + "–" + g.end,
        g.grade !== undefined && g.grade !== 1 ? ", grade " + g.grade : "");
      ev.appendChild(line);
      if (doc.text === null && g.text) {
        // the document's text was not kept, the evidence's own text was
        ev.appendChild(el("blockquote", {class: "x-quote"}, el("mark", null, g.text)));
      } else if (doc.text === null) {
        ev.appendChild(el("p", {class: "x-note"}, "The document's text was not kept in this report (over its size budget)."));
      } else if (!whole) {
        const before = doc.text.slice(Math.max(0, g.start - 80), g.start);
        const after = doc.text.slice(g.end, g.end + 80);
        ev.appendChild(el("blockquote", {class: "x-quote"},
          g.start > 80 ? "…" : "", before, el("mark", null, doc.text.slice(g.start, g.end)), after,
          g.end + 80 < doc.text.length ? "…" : ""));
      }
    });
    view.appendChild(ev);

    const cols = el("div", {class: "x-cols"});
    cols.appendChild(column(X, qi, a, "a", (v) => go.to(qLink(X, qi, v, b))));
    cols.appendChild(column(X, qi, b, "b", (v) => go.to(qLink(X, qi, a, v))));
    view.appendChild(cols);
    // A chunk box shows its first lines; one that holds evidence further down scrolls to it,
    // so the evidence of a long chunk (a parent) is in view without a search.
    requestAnimationFrame(() => {
      cols.querySelectorAll(".x-chunk").forEach((box) => {
        const mark = box.querySelector("mark");
        if (mark && mark.offsetTop - box.offsetTop > box.clientHeight - 40) {
          box.scrollTop = mark.offsetTop - box.offsetTop - 24;
        }
      });
    });
  }

  function column(X, qi, ji, side, onPick) {
    const D = X.D;
    const q = D.questions[qi];
    const job = D.jobs[ji];
    const col = el("section", {class: "x-col", "data-side": side});
    const v = q.outcome[ji];
    const m = markOf(v);
    col.appendChild(el("div", {class: "x-colhead"},
      el("label", null, side + " ", jobSelect(X, ji, onPick, "setting " + side)),
      el("p", null, el("span", {class: "x-mark " + m[0]}), " ",
        (D.primary ? D.primary.label : "outcome") + ": " + (v === null || v === undefined ? "not scored" : fmt(v) + " (" + m[1] + ")"),
        job.rerank ? ", re-ranked by " + job.rerank : "",
        job.parent ? ", parent retrieval" : "",
        job.max_seq_length ? ", window " + job.max_seq_length + " tokens" : "")));
    const H = hitsOf(X, ji);
    const P = passagesOf(X, ji);
    if (!H || !P || !H.p[qi] || !H.p[qi].length) {
      col.appendChild(el("p", {class: "x-msg"}, "No hits for this setting: " + (job.ok ? "none traced." : job.status)));
      return col;
    }
    const list = el("ol", {class: "x-hits"});
    H.p[qi].forEach((pi, rank) => {
      const doc = P.doc[pi];
      const s = P.start[pi];
      const e = P.end[pi];
      const id = P.id[pi];
      const text = passageText(X, ji, pi);
      const cover = [];
      const golds = [];
      let rel = false;
      q.gold.forEach((g, gi) => {
        if (g.doc !== doc) return;
        if (g.start === null || g.start === undefined) {
          cover.push("is in gold " + (gi + 1) + "'s document");
          rel = true;
          return;
        }
        const lo = Math.max(s, g.start);
        const hi = Math.min(e, g.end);
        if (hi <= lo) {
          const on = sharedPages(X, doc, s, e, g.start, g.end);
          if (on) {
            cover.push("is on gold " + (gi + 1) + "'s " + on);
            // credited when pages are what the sweep scores; beside spans, only said
            if (D.primary && D.primary.level === "page") rel = true;
          }
          return;
        }
        rel = true;
        const share = Math.round((100 * (hi - lo)) / Math.max(1, g.end - g.start));
        cover.push("holds " + share + "% of gold " + (gi + 1));
        golds.push([lo - s, hi - s]);
      });
      const score = H.s && H.s[qi] ? H.s[qi][rank] : null;
      const meta = el("p", {class: "x-hitmeta"},
        el("b", null, "#" + (rank + 1)), " ",
        el("a", {href: dLink(X, doc, ji, id)}, id),
        " · score " + fmt(score) + " · " + P.tokens[pi] + " tokens",
        pagesOf(X, doc, s, e) ? " · " + pagesOf(X, doc, s, e) : "");
      if (H.first && H.first[qi]) {
        const f = H.first[qi][rank];
        meta.appendChild(el("span", {class: "x-tag"},
          f === 0 ? "not in the retriever's own ranking" : f === rank + 1 ? "same rank before re-ranking" : "was #" + f + " before re-ranking"));
      }
      if (H.via && H.via[qi] && H.via[qi][rank] >= 0) {
        const c = H.via[qi][rank];
        meta.appendChild(el("span", {class: "x-tag"}, "via chunk ", el("a", {href: dLink(X, P.doc[c], ji, P.id[c])}, P.id[c])));
      }
      const win = P.window ? P.window[pi] : -1;
      if (win >= 0 && win < e - s) {
        // said beside the rank: the greyed tail may sit below the box's first lines
        meta.appendChild(el("span", {class: "x-tag x-trunc", title: "past the model's window: never embedded"},
          "embedded: first " + Math.round((100 * win) / Math.max(1, e - s)) + "%"));
      }
      const li = el("li", {class: rel ? "x-hit x-rel" : "x-hit"}, meta);
      li.appendChild(el("p", {class: rel ? "x-cover" : "x-cover x-none"}, cover.length ? cover.join(", ") : "holds no gold"));
      if (text === null) {
        li.appendChild(el("p", {class: "x-note"}, "The text of this passage was not kept in this report."));
      } else {
        const box = el("div", {class: "x-chunk"});
        box.appendChild(markedText(text, golds, win));
        li.appendChild(box);
      }
      list.appendChild(li);
    });
    col.appendChild(list);
    return col;
  }

  // ---- the document view ------------------------------------------------------------------

  function docSelect(X, selected, onChange) {
    return indexSelect(X.D.docs.map((_, i) => docName(X, i)), selected, onChange, "document");
  }

  function documentView(X, view, p, go) {
    const D = X.D;
    const doc = byIdFor(X, X.docById, p.document, jobFrom(X, p.job, go.lastA()));
    if (doc === undefined) {
      message(view, "No document with id “" + p.document + "” in this report.", X);
      return;
    }
    const ji = jobFrom(X, p.job, go.lastA());
    if (ji < 0) {
      message(view, "No setting with job number " + p.job + " in this sweep.", X);
      return;
    }
    const d = D.docs[doc];
    const P = passagesOf(X, ji);
    const chunks = chunksIn(X, ji, doc);
    clear(view);
    view.appendChild(el("p", {class: "x-crumbs"}, el("a", {href: listHash(X, {a: go.lastA(), b: go.lastB()})}, "← all questions")));
    view.appendChild(el("h3", {class: "x-title", tabindex: "-1"}, "Document " + d.id));
    view.appendChild(el("div", {class: "x-filters"},
      el("label", null, "document ", docSelect(X, doc, (v) => go.to(dLink(X, v, ji)))),
      el("label", null, "setting ", jobSelect(X, ji, (v) => go.to(dLink(X, doc, v)), "setting"))));
    const golds = goldIn(X, doc).filter((g) => g.start !== null && g.start !== undefined && g.end > g.start);
    // evidence no single chunk holds whole: a chunk boundary cuts it
    const cutPoints = new Map(); // position -> question ids whose evidence the boundary cuts
    let nCut = 0;
    for (const g of golds) {
      let held = false;
      for (const c of chunks) {
        if (P.start[c] <= g.start && g.end <= P.end[c]) { held = true; break; }
      }
      if (held || !chunks.length) continue;
      nCut += 1;
      for (const c of chunks) {
        for (const pos of [P.start[c], P.end[c]]) {
          if (pos > g.start && pos < g.end) {
            if (!cutPoints.has(pos)) cutPoints.set(pos, []);
            cutPoints.get(pos).push(D.questions[g.q].id);
          }
        }
      }
    }
    view.appendChild(el("p", {class: "x-note"},
      d.n_chars.toLocaleString("en") + " characters" + (d.language ? ", " + d.language : "") +
      (d.pages ? ", " + d.pages.length + " pages" : "") + "; " + chunks.length + " chunks of " +
      jobName(X, ji) + "; " + golds.length + " evidence spans, " + nCut + " cut by a chunk boundary."));
    view.appendChild(el("p", {class: "x-legend"},
      el("span", {class: "x-sw k0"}), " chunk ", el("span", {class: "x-sw k1"}), " next chunk ",
      el("span", {class: "x-sw ov"}), " overlap ", el("span", {class: "x-sw gap"}), " in no chunk ",
      el("u", {class: "x-ev"}, "evidence"), " ", el("span", {class: "x-cut"}), " evidence cut by a boundary"));
    if (!P) {
      view.appendChild(el("p", {class: "x-msg"}, "This setting has no chunks: " + D.jobs[ji].status));
      return;
    }
    const box = el("div", {class: "x-doc"});
    const target = p.chunk ? chunks.find((c) => P.id[c] === p.chunk) : undefined;
    if (p.chunk && target === undefined) {
      view.appendChild(el("p", {class: "x-msg"}, "No chunk “" + p.chunk + "” of this setting in this document."));
    }
    let targetLabel = null;
    if (d.text === null) {
      view.appendChild(el("p", {class: "x-note"}, "The document's text was not kept in this report (over its size budget); its chunks as kept:"));
      const frag = document.createDocumentFragment();
      let part = null;
      chunks.forEach((c, n) => {
        // see drawBoundaries: a long list's blocks are laid out when they near the window
        if (n % 10 === 0) part = frag.appendChild(el("div", {class: chunks.length > 50 ? "x-part" : null}));
        const label = chunkLabel(X, P, doc, c);
        if (c === target) targetLabel = label;
        const t = passageText(X, ji, c);
        part.appendChild(label);
        part.appendChild(el("span", {class: (n % 2 ? "k1" : "k0") + (c === target ? " hl" : "")}, t === null ? "(text not kept)" : t));
        part.appendChild(document.createTextNode("\n"));
      });
      box.appendChild(frag);
    } else {
      targetLabel = drawBoundaries(X, box, d.text, P, doc, chunks, golds, cutPoints, target);
    }
    view.appendChild(box);
    if (targetLabel) {
      go.after(() => {
        // the chunk to the middle of the text's box, then the view back to the window's top
        targetLabel.scrollIntoView({block: "center"});
        go.top();
      });
    }
  }

  function chunkLabel(X, P, doc, c) {
    const pages = pagesOf(X, doc, P.start[c], P.end[c]);
    return el("span", {class: "x-clabel", title: "chunk " + P.id[c] + ": characters " + P.start[c] + "–" + P.end[c] + ", " + P.tokens[c] + " tokens"},
      P.id[c] + (pages ? " · " + pages : ""));
  }

  // One sweep over the cut points (chunk edges, evidence edges): each piece gets the class
  // of the chunks over it (k0/k1 alternating, ov when two overlap, gap when none); built in a
  // DocumentFragment, so a 300k-character document is a few thousand nodes appended once.
  //
  // The text goes into blocks of about PART characters, each cut after a line end (so the
  // page looks the same) and styled content-visibility:auto: the browser lays out only the
  // blocks near the window. Laying out all 300,000 characters at once took 1.5 s for mixed
  // Latin/Japanese text and 19 s for Japanese alone (on a machine without CJK fonts).
  function drawBoundaries(X, box, text, P, doc, chunks, golds, cutPoints, target) {
    const D = X.D;
    const n = text.length;
    const starts = new Map(); // position -> chunk ordinals starting there
    const ends = new Map();
    const pts = new Set([0, n]);
    chunks.forEach((c, k) => {
      const s = Math.max(0, Math.min(n, P.start[c]));
      const e = Math.max(0, Math.min(n, P.end[c]));
      if (!starts.has(s)) starts.set(s, []);
      starts.get(s).push(k);
      if (!ends.has(e)) ends.set(e, []);
      ends.get(e).push(k);
      pts.add(s);
      pts.add(e);
    });
    const gStarts = new Map();
    const gEnds = new Map();
    for (const g of golds) {
      const s = Math.max(0, Math.min(n, g.start));
      const e = Math.max(0, Math.min(n, g.end));
      if (!gStarts.has(s)) gStarts.set(s, []);
      gStarts.get(s).push(g);
      if (!gEnds.has(e)) gEnds.set(e, []);
      gEnds.get(e).push(g);
      pts.add(s);
      pts.add(e);
    }
    for (const pos of cutPoints.keys()) pts.add(pos);
    const order = Array.from(pts).sort((x, y) => x - y);
    const active = new Set();
    const activeGold = new Set();
    const frag = document.createDocumentFragment();
    // a short document is one plain block: its text is rendered at once, no block skipped
    const size = n > 5 * PART ? PART : Infinity;
    const partClass = size === PART ? "x-part" : null;
    let part = el("div", {class: partClass});
    let partLen = 0;
    frag.appendChild(part);
    // a piece of text with its class (and evidence title), split where a block ends
    const put = (piece, cls, evTitle) => {
      let rest = piece;
      while (rest) {
        let cut = -1;
        if (partLen + rest.length > size) {
          const from = Math.max(0, size - partLen);
          cut = rest.indexOf("\n", from);
          // a text without line ends is cut at a space once a block is 3 parts long
          if (cut < 0 && partLen + rest.length > 3 * size) cut = rest.indexOf(" ", Math.max(0, 3 * size - partLen));
          // ...and one without spaces either (Japanese, Chinese) where the part is full:
          // without CJK fonts a 16,000-character block took 7 s to lay out, 4,000 under 2 s;
          // never between the two halves of a surrogate pair
          if (cut < 0 && !/[ \n]/.test(rest.slice(from))) {
            cut = Math.max(0, from - 1);
            const c = rest.charCodeAt(cut);
            if (c >= 0xd800 && c <= 0xdbff) cut += 1;
          }
        }
        const head = cut < 0 ? rest : rest.slice(0, cut + 1);
        rest = cut < 0 ? "" : rest.slice(cut + 1);
        let node = document.createTextNode(head);
        if (evTitle) node = el("u", {class: "x-ev", title: evTitle}, node);
        part.appendChild(el("span", {class: cls}, node));
        partLen += head.length;
        if (cut >= 0) {
          part = el("div", {class: partClass});
          partLen = 0;
          frag.appendChild(part);
        }
      }
    };
    let targetLabel = null;
    for (let i = 0; i + 1 < order.length; i++) {
      const s = order[i];
      const e = order[i + 1];
      for (const k of ends.get(s) || []) active.delete(k);
      for (const g of gEnds.get(s) || []) activeGold.delete(g);
      for (const g of gStarts.get(s) || []) activeGold.add(g);
      if (cutPoints.has(s)) {
        part.appendChild(el("span", {class: "x-cut", role: "img", "aria-label": "evidence cut here",
          title: "a chunk boundary cuts the evidence of " + cutPoints.get(s).join(", ") + ": no chunk holds all of it"}));
      }
      for (const k of starts.get(s) || []) {
        active.add(k);
        const label = chunkLabel(X, P, doc, chunks[k]);
        if (chunks[k] === target) targetLabel = label;
        part.appendChild(label);
      }
      if (s >= e) continue;
      let cls;
      if (active.size === 0) cls = "gap";
      else if (active.size > 1) cls = "ov";
      else cls = "k" + (active.values().next().value % 2);
      if (target !== undefined) {
        for (const k of active) if (chunks[k] === target) { cls += " hl"; break; }
      }
      let evTitle = null;
      if (activeGold.size) {
        const ids = Array.from(new Set(Array.from(activeGold, (g) => D.questions[g.q].id)));
        evTitle = "evidence of " + ids.slice(0, 8).join(", ") + (ids.length > 8 ? " and " + (ids.length - 8) + " more" : "");
      }
      put(text.slice(s, e), cls, evTitle);
    }
    box.appendChild(frag);
    return targetLabel;
  }

  // ---- the frame: navigation, router ------------------------------------------------------

  function start() {
    const root = document.getElementById("explorer");
    if (!root) return;
    clear(root);
    let D = null;
    try {
      D = readData();
    } catch (e) {
      root.appendChild(el("p", {class: "x-msg"}, "The explorer's data could not be read: " + e.message));
      return;
    }
    if (!D) {
      const name = sidecarName();
      root.appendChild(el("p", {class: "x-msg x-missing", role: "alert"},
        name + " was not found beside report.html: the explorer's data lives in that file, and the two files travel together (copy or mail both)."));
      return;
    }
    const X = index(D);
    const nav = el("nav", {class: "x-nav", "aria-label": "explorer"});
    const qNav = el("a", {href: "#questions"}, "Questions");
    const dNav = el("a", {href: D.docs.length ? "#document=" + enc(D.docs[0].id) : "#questions"}, "Documents");
    nav.appendChild(el("b", null, "Explorer"));
    nav.appendChild(qNav);
    nav.appendChild(dNav);
    nav.appendChild(el("span", {class: "x-note"},
      D.questions.length + " questions × " + D.jobs.length + " settings · " + D.docs.length + " documents"));
    const view = el("div", {class: "x-view"});
    root.appendChild(nav);
    root.appendChild(view);

    let lastA = X.defA;
    let lastB = X.defB;
    const pending = [];
    const go = {
      to: (hash) => { location.hash = hash; },
      remember: (a, b) => {
        lastA = a;
        lastB = b;
        qNav.setAttribute("href", listHash(X, {a: a, b: b}));
      },
      lastA: () => lastA,
      lastB: () => lastB,
      after: (fn) => pending.push(fn),
      top: () => root.scrollIntoView({block: "start"}),
      setAB: (a, b) => {
        go.to(listHash(X, {a: a === null ? lastA : a, b: b === null ? lastB : b}));
        root.scrollIntoView({block: "start"});
      },
    };

    function route(initial) {
      const p = parseHash(location.hash);
      if (!p) {
        // the page's own address (Back to where it opened) is the list; a section's anchor
        // or a picture's zoom leaves the view as it is
        if (initial || !location.hash.replace(/^#/, "")) questionList(X, view, {}, go);
        root.setAttribute("data-view", location.hash);
        performance.mark("sweep-explorer-drawn");
        return;
      }
      pending.length = 0;
      if (p.view === "question") questionView(X, view, p, go);
      else if (p.view === "document") documentView(X, view, p, go);
      else questionList(X, view, p, go);
      dNav.setAttribute("href", p.view === "document" ? location.hash : "#document=" + enc(D.docs.length ? D.docs[0].id : "") + "&job=" + jobNum(X, lastA));
      // a view opens at the top of the window, not somewhere down the long page
      if (p.view !== "questions" || !initial) root.scrollIntoView({block: "start"});
      const title = view.querySelector(".x-title");
      if (title && !initial) title.focus({preventScroll: true});
      for (const fn of pending.splice(0)) fn();
      root.setAttribute("data-view", location.hash); // the view drawn (tests wait for it)
      performance.mark("sweep-explorer-drawn"); // bench/explorer_scale.py reads it
    }

    resultsTable(X, go);
    window.addEventListener("hashchange", () => route(false));
    route(true);
    root.setAttribute("data-ready", "1");
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
