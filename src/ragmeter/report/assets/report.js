// ragmeter report: builds the page from the JSON block with textContent only.
(function () {
  "use strict";

  const DATA = JSON.parse(document.getElementById("ragmeter-data").textContent);
  const SYSTEMS = DATA.systems.map((s) => s.name);
  const DOCS = DATA.docs;
  const QUESTIONS = DATA.questions;
  const OPT = DATA.optional || {};
  const SVG_NS = "http://www.w3.org/2000/svg";

  // ------------------------------------------------------------------ helpers

  function el(tag, attrs) {
    const node = document.createElement(tag);
    setAttrs(node, attrs);
    for (let i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }

  function svg(tag, attrs) {
    const node = document.createElementNS(SVG_NS, tag);
    setAttrs(node, attrs);
    for (let i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }

  // Text from the user's files (ids, systems, questions, passages) may hold right-to-left
  // letters or bidi controls (U+202E...): every element given text gets dir="auto", which
  // isolates it (unicode-bidi: isolate), and loose strings that hold such characters are
  // wrapped in <bdi>, so they cannot reorder the text around them.
  const BIDI = /[\u0590-\u08FF\u200E\u200F\u202A-\u202E\u2066-\u2069\uFB1D-\uFDFF\uFE70-\uFEFF]/;

  function setAttrs(node, attrs) {
    if (!attrs) return;
    for (const key of Object.keys(attrs)) {
      const value = attrs[key];
      if (value === null || value === undefined || value === false) continue;
      if (key === "text") {
        node.textContent = String(value);
        if (node.namespaceURI !== SVG_NS && !attrs.dir) node.setAttribute("dir", "auto");
      }
      else if (key === "class") node.setAttribute("class", value);
      else if (key.slice(0, 2) === "on") node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
  }

  function append(node, kid) {
    if (kid === null || kid === undefined || kid === false) return;
    if (Array.isArray(kid)) { kid.forEach((k) => append(node, k)); return; }
    if (kid instanceof Node) { node.append(kid); return; }
    const text = String(kid);
    if (BIDI.test(text) && node.namespaceURI !== SVG_NS) {
      const iso = document.createElement("bdi");
      iso.textContent = text;
      node.append(iso);
    } else {
      node.append(document.createTextNode(text));
    }
  }

  // Each measure's family, cutoff, and the scale, digits and unit its differences print
  // with come with the data (ragmeter.scoring.names.metric_info): the page keeps no list
  // of shares and no factor of its own.
  const info = (m) => (DATA.metric_info || {})[m] || {};
  const family = (m) => info(m).family || m;
  const kOf = (m) => (info(m).k == null ? NaN : info(m).k);
  const diffUnit = (m) => info(m).difference_unit || "";
  // a difference (or half-width) of measure m in the unit its differences print in:
  // points for a share (0.04 -> 4), the measure's own scale otherwise
  const diffScaled = (m, d) => d * info(m).difference_scale;
  const diffNum = (m, d) => diffScaled(m, d).toFixed(info(m).difference_digits);
  const fmtDiff = (m, d) => diffNum(m, d) + (diffUnit(m) ? " " + diffUnit(m) : "");
  const int = (x) => Math.round(x).toLocaleString("en-US");
  // an interval level as every table header names it ("95%"): each section's data carries
  // its own, from the run's summary (where an older run gets its default)
  const level = (c) => Math.round(c * 1000) / 10 + "%";
  const LEVEL = level(DATA.stats.confidence);

  // Every estimate arrives with `shown`, the text the terminal prints for it
  // (ragmeter.formatting.format_estimate): the page never formats a number itself.
  function fmtEst(e) {
    return e ? e.shown : "–";
  }

  function fmtShare(e) {
    return e ? e.shown.replace(" [", "% [") : "–";
  }

  function table(target, head, rows) {
    const t = typeof target === "string" ? document.getElementById(target) : target;
    t.replaceChildren();
    const thead = el("thead", null, el("tr", null, head.map((h) => {
      const spec = typeof h === "string" ? { text: h } : h;
      const cls = [spec.num ? "num" : null, spec.wrap ? "wrap" : null].filter(Boolean).join(" ");
      return el("th", { class: cls || null, title: spec.title, text: spec.text });
    })));
    const tbody = el("tbody");
    rows.forEach((row) => {
      if (row && row.group) {
        tbody.append(el("tr", { class: "group" }, el("td", { colspan: head.length, text: row.group })));
        return;
      }
      tbody.append(el("tr", null, row.map((cell) => {
        if (cell instanceof Node) return el("td", null, cell);
        if (cell && typeof cell === "object") {
          return el("td", { class: cell.cls, title: cell.title }, cell.node || cell.text);
        }
        return el("td", null, cell === null || cell === undefined ? "" : String(cell));
      })));
    });
    t.append(thead, tbody);
    return t;
  }

  function strategyText(s) {
    const st = s.strategy || {};
    const parts = [];
    if (st.kind) parts.push(st.kind);
    Object.keys(st).sort().forEach((k) => {
      if (k !== "kind" && k !== "name") parts.push(k + " " + st[k]);
    });
    return parts.join(", ");
  }

  function retrieverText(s) {
    const r = s.retriever || {};
    return r.name || r.kind || "";
  }

  // ------------------------------------------------------------------ summary

  function renderNav() {
    const nav = document.getElementById("nav");
    const links = [["summary", "Summary"], ["routes", "Routes"], ["measures", "Measures"],
      ["comparisons", "Comparisons"], ["sample-size", "Sample size"]];
    if (OPT.answers) links.push(["answers", "Answers"]);
    if (OPT.failures) links.push(["failures", "Failures"]);
    if (OPT.audit) links.push(["audit", "Audit"]);
    if (OPT.history) links.push(["history", "History"]);
    links.push(["questions", "Questions"]);
    links.forEach((l) => nav.append(el("a", { href: "#" + l[0], text: l[1] })));
  }

  // "*" when a system had fewer items than k: that k was scored at its item count.
  function capMark(system, metric) {
    const cap = (DATA.k_capped || {})[system];
    return cap !== undefined && kOf(metric) > cap ? "*" : "";
  }

  function capNote() {
    const capped = DATA.k_capped || {};
    const byCap = {};
    Object.keys(capped).forEach((s) => { (byCap[capped[s]] = byCap[capped[s]] || []).push(s); });
    const caps = Object.keys(byCap);
    if (!caps.length) return null;
    return el("p", { class: "muted note", text: "* k capped at the system's item count: " +
      caps.map((n) => n + (Number(n) === 1 ? " item" : " items") + " for " + byCap[n].join(", ")).join("; ") + "." });
  }

  // Questions a system matched nothing for: no item it returned scored above 0.
  function unmatchedNote() {
    const unmatched = DATA.unmatched || {};
    const systems = Object.keys(unmatched);
    if (!systems.length) return null;
    const parts = systems.map((s) => s + ": " + unmatched[s].length + " (" +
      unmatched[s].slice(0, 10).join(", ") + (unmatched[s].length > 10 ? ", …" : "") + ")");
    return el("p", { class: "muted note", id: "unmatched-note", text: "Questions nothing matched " +
      "(no item returned scored above 0, so those items are in no meaningful order): " +
      parts.join("; ") + "." });
  }

  function names(list, max) {
    const shown = list.slice(0, max);
    const out = [];
    shown.forEach((s, i) => out.push(i ? (i === shown.length - 1 && list.length <= max ? " and " : ", ") : "",
      el("b", { text: s })));
    if (list.length > max) out.push(" and " + (list.length - max) + " more");
    return out;
  }

  function renderSummary() {
    const h = DATA.headline;
    const m = DATA.metric;
    const line = document.getElementById("headline");
    const wk = h.words_key;
    const words = (s) => (DATA.estimates[s][wk] ? DATA.estimates[s][wk].mean : null);
    const gap = (a, b) => {
      const d = DATA.estimates[a][m].mean - DATA.estimates[b][m].mean;
      return fmtDiff(m, d);
    };
    if (h.best) {
      const e = DATA.estimates[h.best][m];
      const bw = words(h.best);
      const front = h.frontier || [];
      if (front.length > 1) {
        // No single winner: recall at a fixed k rewards large items, so it is read
        // beside the words each system sends.
        const parts = ["On ", el("b", { text: m }), " against words sent in the top " + kOf(wk) +
          ", no system beats " + (front.length === 2 ? "either" : "any") + " of these on both: "];
        const shown = front.slice(0, 6);
        shown.forEach((s, i) => parts.push(i ? (i === shown.length - 1 && front.length <= 6 ? " and " : ", ") : "",
          el("strong", { text: s }), " " + fmtEst(DATA.estimates[s][m], m) + capMark(s, m) +
          " with " + int(words(s)) + " words"));
        if (front.length > 6) parts.push(" and " + (front.length - 6) + " more");
        parts.push(".");
        append(line, el("span", { class: "hl" }, parts));
      }
      const top = h.top && h.top.length > 1 ? h.top : [h.best];
      const lead = top.length > 1
        ? [" Highest on ", el("b", { text: m }), ", tied: "].concat(names(top, 4), [" at " + fmtEst(e, m)])
        : [(front.length > 1 ? " Highest on " : "Highest on "), el("b", { text: m }), ": ",
          el("strong", { text: h.best }), " at " + fmtEst(e, m) + capMark(h.best, m)];
      append(line, el("span", { class: "hl" }, lead.concat([
        bw === null || top.length > 1 ? "" : ", sending " + int(bw) + " words in its top " + kOf(wk), "."])));
      if (h.next && top.length === 1) {
        const nw = words(h.next);
        const cost = [" Next highest: ", el("b", { text: h.next }), " at " +
          fmtEst(DATA.estimates[h.next][m], m) + capMark(h.next, m)];
        if (bw !== null && nw !== null) {
          cost.push(" with " + int(nw) + " words; the highest gains " + gap(h.best, h.next) +
            (bw > nw ? " for " + int(bw - nw) + " more words" +
              (nw > 0 ? " (" + (bw / nw).toFixed(1) + "× the words)" : "") :
              " and sends " + int(nw - bw) + " fewer words") + ".");
        } else {
          cost.push(".");
        }
        append(line, el("span", { class: "hl" }, cost));
      }
      if (h.ranks) {
        const link = DATA.ranks && DATA.ranks.systems.length > 2
          ? [" (", el("a", { href: "#ranks", text: "Ranks" }), ")."] : ["."];
        append(line, el("span", { class: "hl", id: "headline-ranks" }, [" By the verdicts on ",
          el("b", { text: m }), ": " + h.ranks].concat(link)));
      }
      if (h.cheapest_tied) {
        append(line, el("span", { class: "hl" }, [" ", el("b", { text: h.cheapest_tied }),
          " is not separated from the highest and sends " + int(words(h.cheapest_tied)) + " words."]));
      }
      if (h.pair_count) {
        const ties = [" " + h.tie_count + " of " + h.pair_count + " paired comparisons are ties"];
        if (h.identical_count) {
          ties.push(" (and " + h.identical_count + " more pair" + (h.identical_count === 1 ? " is" : "s are") +
            " identical systems, left out of the rule's count)");
        }
        if (h.not_below_best.length) {
          ties.push("; not separated from the highest: ");
          ties.push(names(h.not_below_best, 3));
        } else if (h.named_ties.length) {
          ties.push(", among them ");
          h.named_ties.forEach((t, i) => ties.push(i ? (i === h.named_ties.length - 1 ? " and " : ", ") : "",
            el("b", { text: t[0] }), " vs ", el("b", { text: t[1] })));
        }
        if (h.tie_count) {
          ties.push(" (all pairs under ");
          ties.push(el("a", { href: "#comparisons", text: "Paired comparisons" }));
          ties.push(")");
        }
        ties.push(".");
        append(line, el("span", { class: "hl" }, ties));
      }
    } else {
      line.textContent = "No estimates found for " + m + ".";
    }
    renderGrid();
    const c = DATA.config;
    const st = DATA.stats;
    const cfg = document.getElementById("summary-config");
    const item = (k, v) => el("div", null, el("span", { text: k }), el("b", { text: v }));
    append(cfg, [
      item("questions", c.n_questions.toLocaleString("en-US")),
      item("systems", String(SYSTEMS.length)),
      item("corpus", (c.corpus.documents || "?") + " documents" +
        (c.corpus.path ? " · " + c.corpus.path : "")),
      item("test set", c.testset.path || "–"),
      item("metric compared", m),
      item("intervals", level(st.confidence) +
        (DATA.clusters && DATA.clusters.used ? " cluster bootstrap, " : " bootstrap, ") +
        st.rounds + " rounds, seed " + st.seed + (st.rng ? " (" + st.rng + ")" : "")),
      item("ranked depth", "top " + c.depth + ", relevant grade " + c.relevant_grade),
    ]);
    const cl = DATA.clusters;
    if (cl) append(cfg, item("clusters", cl.questions + " questions in " + cl.count + " " +
      (cl.source === "document" ? "documents" : "clusters") + "; " +
      (cl.used ? "cluster-aware" : "question-level") + " intervals (" + cl.reason + ")"));
    const k = DATA.main_k;
    const head = ["system", "strategy", "retriever", { text: "items", num: true },
      { text: m + " [" + LEVEL + " CI]", num: true }, { text: "words@" + k, num: true }];

    const rows = SYSTEMS.map((s, i) => {
      const e = DATA.estimates[s];
      return [
        { text: s, cls: "name" + (s === h.best ? " best" : "") },
        strategyText(DATA.systems[i]),
        retrieverText(DATA.systems[i]),
        { text: DATA.systems[i].items === null ? "" : int(DATA.systems[i].items), cls: "num" },
        { text: fmtEst(e[m], m) + capMark(s, m), cls: "num" + (s === h.best ? " best" : "") },
        { text: e["words@" + k] ? int(e["words@" + k].mean) + capMark(s, "words@" + k) : "–", cls: "num" },
      ];
    });
    table("summary-table", head, rows);
    const note = capNote();
    if (note) document.getElementById("summary-table").parentNode.after(note);
    if (cl) (note || document.getElementById("summary-table").parentNode).after(designNote(cl, m));
  }

  // "1.46 [0.92, 2.10] ~ 92": how much the shared documents widen the interval.
  function designText(d) {
    if (!d) return "–";
    return d.deff.toFixed(2) + " [" + d.low.toFixed(2) + ", " + d.high.toFixed(2) + "] ~ " +
      Math.round(d.effective);
  }

  // Under the summary table: every system's design effect and effective questions.
  function designNote(cl, m) {
    const parts = SYSTEMS.filter((s) => cl.design[s]).map((s) => s + " " + designText(cl.design[s]));
    return el("p", { class: "muted note", id: "design-note", text: "Questions share " +
      (cl.source === "document" ? "documents" : "clusters") + " (" + cl.per_cluster.toFixed(1) +
      " each). Design effect on " + m + " [" + LEVEL + " CI] ~ effective questions: " +
      (parts.join("; ") || "none (equal scores)") + "." });
  }

  // A strategy x retriever grid of the compared metric, when there are several retrievers.
  function renderGrid() {
    const g = DATA.grid;
    const box = document.getElementById("summary-grid");
    if (!g || !box) return;
    const m = DATA.metric;
    const wk = DATA.headline.words_key;
    const t = el("table", { class: "data", id: "grid-table" });
    table(t, [{ text: "strategy \\ retriever", title: m + " [" + LEVEL + " CI] · " + wk }].concat(
      g.retrievers.map((r) => ({ text: r + ": " + m + " · " + wk, num: true }))),
    g.strategies.map((st, i) => [st].concat(g.cells[i].map((s) => (s ? {
      text: fmtEst(DATA.estimates[s][m], m) + capMark(s, m) +
        (DATA.estimates[s][wk] ? " · " + int(DATA.estimates[s][wk].mean) : ""),
      cls: "num" + (s === DATA.headline.best ? " best" : ""), title: s,
    } : { text: "–", cls: "num" })))));
    box.append(el("div", { class: "scroll" }, t));
    box.hidden = false;
    // The grid is the first screen's summary; the per-system table follows the settings.
    const summaryTable = document.getElementById("summary-table").parentNode;
    document.getElementById("summary-config").after(summaryTable);
  }

  // ------------------------------------------------------------------ route diagram

  function wrapWords(text, width) {
    const words = String(text).split(/\s+/);
    const lines = [];
    let cur = "";
    words.forEach((w) => {
      if (cur && (cur + " " + w).length > width) { lines.push(cur); cur = w; }
      else cur = cur ? cur + " " + w : w;
    });
    if (cur) lines.push(cur);
    if (lines.length > 3) { lines.length = 3; lines[2] = lines[2].slice(0, width - 1) + "…"; }
    return lines;
  }

  function renderRoute() {
    const lanes = DATA.route.lanes;
    const W = 158, H = 78, GX = 26, TITLE = 22, GY = 30, PAD = 12;
    const cols = Math.max.apply(null, lanes.map((l) => l.start + l.steps.length));
    const width = PAD * 2 + cols * W + (cols - 1) * GX;
    const rowY = (r) => PAD + r * (H + TITLE + GY) + TITLE;
    const colX = (c) => PAD + c * (W + GX);
    const height = rowY(lanes.length - 1) + H + PAD;
    const root = svg("svg", { viewBox: "0 0 " + width + " " + height, role: "img",
      "aria-label": "Routes that were run" });
    const defs = svg("defs");
    ["on", "off"].forEach((kind) => {
      defs.append(svg("marker", { id: "arrow-" + kind, viewBox: "0 0 10 10", refX: 9, refY: 5,
        markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
      svg("path", { d: "M0,0 L10,5 L0,10 z", fill: kind === "on" ? "#6b7a90" : "#c4c4c4" })));
    });
    root.append(defs);
    lanes.forEach((lane, r) => {
      const y = rowY(r);
      root.append(svg("text", { x: colX(lane.start), y: y - 7, class: "lane", text: lane.title }));
      lane.steps.forEach((step, i) => {
        const x = colX(lane.start + i);
        const off = !step.ran;
        const g = svg("g", { class: "step" + (off ? " off" : "") });
        g.append(svg("rect", { x: x, y: y, width: W, height: H, rx: 8, class: "box" + (off ? " off" : "") }));
        g.append(svg("text", { x: x + 10, y: y + 19, class: "label" + (off ? " off-text" : ""),
          text: step.label }));
        wrapWords(step.detail, 24).forEach((line, j) => {
          g.append(svg("text", { x: x + 10, y: y + 37 + j * 14, class: "detail" + (off ? " off-text" : ""),
            text: line }));
        });
        g.append(svg("title", { text: step.label + ": " + step.detail + (off ? " (not run)" : "") }));
        root.append(g);
        if (i > 0) {
          const prevOff = !lane.steps[i - 1].ran;
          root.append(svg("path", { d: "M" + (x - GX + 1) + "," + (y + H / 2) + " H" + (x - 2),
            class: "arrow" + (off || prevOff ? " off" : ""),
            "marker-end": "url(#arrow-" + (off || prevOff ? "off" : "on") + ")" }));
        }
      });
      if (lane.branch !== null && lane.branch !== undefined) {
        const from = lanes[0];
        const fx = colX(from.start + lane.branch) + W / 2;
        const fy = rowY(0) + H;
        const tx = colX(lane.start) - 2;
        const ty = y + H / 2;
        const off = !lane.steps[0].ran;
        root.append(svg("path", { d: "M" + fx + "," + fy + " V" + ty + " H" + tx,
          class: "arrow" + (off ? " off" : ""), "marker-end": "url(#arrow-" + (off ? "off" : "on") + ")" }));
      }
    });
    document.getElementById("route-diagram").append(root);
  }

  // ------------------------------------------------------------------ measures

  function renderMeasures() {
    const ks = DATA.ks;
    const head = ["system"];
    ks.forEach((k) => {
      head.push({ text: "recall@" + k + " (%)", num: true, title: "hit rate with its " + LEVEL + " interval" });
      head.push({ text: "words@" + k, num: true, title: "mean words sent in the top " + k });
    });
    table("hit-table", head, SYSTEMS.map((s) => {
      const e = DATA.estimates[s];
      const row = [{ text: s, cls: "name" }];
      ks.forEach((k) => {
        row.push({ text: fmtEst(e["recall@" + k], "recall@" + k) + capMark(s, "recall@" + k), cls: "num" });
        row.push({ text: e["words@" + k] ? int(e["words@" + k].mean) + capMark(s, "words@" + k) : "–", cls: "num" });
      });
      return row;
    }));

    const rows = [];
    DATA.families.forEach((fam) => {
      rows.push({ group: DATA.family_titles[fam] || fam });
      DATA.metrics.filter((m) => family(m) === fam).sort((a, b) => kOf(a) - kOf(b)).forEach((m) => {
        const means = SYSTEMS.map((s) => (DATA.estimates[s][m] ? DATA.estimates[s][m].mean : -Infinity));
        const best = info(m).cost || SYSTEMS.length < 2 ? null : Math.max.apply(null, means);
        rows.push([m].concat(SYSTEMS.map((s, i) => ({
          text: fmtEst(DATA.estimates[s][m], m) + capMark(s, m),
          cls: "num" + (best !== null && means[i] === best ? " best" : ""),
        }))));
      });
    });
    table("measures-table", ["measure"].concat(SYSTEMS.map((s) => ({ text: s, num: true }))), rows);
    const note = capNote();
    if (note) document.getElementById("measures-table").parentNode.after(note);
    const unmatched = unmatchedNote();
    if (unmatched) document.getElementById("measures-table").parentNode.after(unmatched);
    if (DATA.ndcg && DATA.ndcg.note) {
      document.getElementById("measures-table").parentNode.after(
        el("p", { class: "muted note", id: "ndcg-note", text: DATA.ndcg.note }));
    }
  }

  // ------------------------------------------------------------------ comparisons

  // The table of paired comparisons, the search's and the answers': A, B, A − B with its
  // interval (in `unit`, points for a share), wins / ties / losses, the rule's p and the
  // verdict, as the terminal prints them (`shown`); `separate` adds the search's column of
  // the questions a tie would need.
  function comparisonTable(target, comps, rule, unit, separate) {
    unit = unit ? " (" + unit + ")" : "";
    const adjust = rule ? rule.adjust : "legacy";
    const ruleName = { maxt: "max-T", fdr: "BH" }[adjust] || "Holm";
    const ci = ["holm", "maxt", "fdr"].includes(adjust) ? (rule.pairs === 1 ? "[" +
      Math.round((1 - rule.alpha) * 100) + "% CI]" : "[" + ruleName + "-level CI]") : "[" + LEVEL + " CI]";
    const pLabel = adjust === "none" ? null : (rule && rule.pairs === 1 ? "p" :
      "p (" + ruleName + ")");
    const head = ["A", "B", { text: "A − B" + unit + " " + ci, num: true, wrap: true },
      { text: "wins / ties / losses", num: true, wrap: true }];
    if (pLabel) head.push({ text: pLabel, num: true });
    head.push("verdict");
    if (separate) head.push({ text: "questions to separate the observed difference", num: true, wrap: true,
      title: "for a tie: questions a paired test of this pair alone would need to separate a true " +
        "difference as large as the observed one (power " + DATA.sample_size.power +
        "), at the pair's design effect when " +
        "questions share documents and the comparisons resample them (else 1); ragmeter plan " +
        "plans a difference you choose, in the run's family" });
    return table(target, head, comps.map((c) => {
      const shown = c.shown || {};
      const cells = [{ text: c.a, cls: "name" }, { text: c.b, cls: "name" },
        { text: shown.difference, cls: "num" },
        { text: c.wins + " / " + c.ties + " / " + c.losses, cls: "num" }];
      if (pLabel) cells.push({ text: shown.p, cls: "num" });
      // the verdict wraps between words to fit the page; the system that won stays whole
      const named = c.winner;
      const verdict = named ? [el("span", { class: "name", text: named }), c.verdict.slice(named.length)]
        : c.verdict;
      cells.push({ cls: "verdict", node: el("span", { class: "tag " + (c.separated ? "sep" : "tie") }, verdict) });
      if (separate) cells.push(
        // the design effect goes on a line of its own, so the column stays as narrow as its header
        { node: c.to_separate ? ["≈ " + int(c.to_separate), c.to_separate_deff > 1 ?
          el("span", { class: "deff", text: "design effect " + c.to_separate_deff.toFixed(2) }) : null]
          : "", cls: "num" });
      return cells;
    }));
  }

  function renderComparisons() {
    const m = DATA.metric;
    const comps = DATA.comparisons;
    const lead = document.getElementById("compare-lead");
    if (!comps.length) {
      lead.textContent = "Only one system: nothing to compare.";
      return;
    }
    const st = DATA.stats;
    const rule = DATA.comparison_rule;
    lead.textContent = "Systems compared on the same questions, on " + m + " (seed " + st.seed +
      ", " + st.rounds + " rounds). " + (rule ? rule.header + "." :
      "The verdict reads the " + LEVEL + " paired percentile interval; p is Holm-adjusted over all pairs.") +
      (DATA.comparison_note ? " " + DATA.comparison_note : "");
    comparisonTable("compare-table", comps, rule, diffUnit(m), true);
    const box = document.getElementById("compare-ranks");
    if (box && DATA.ranks) append(box, ranksBlock(DATA.ranks, "ranks"));
  }

  // Where each system ranks (comparison.ranks): the sentence, each system's mean, its
  // simultaneous rank range and its tie-group letters, and the line saying what they mean.
  // Every text comes from the data; nothing is formatted here. From three systems on, as
  // the terminal prints it (two systems' ranks are their one verdict).
  function ranksBlock(r, id) {
    if (r.systems.length < 3) return [];
    const head = el("h3", { id: id, text: "Ranks on " + r.metric + ": " + r.sentence });
    const t = el("table", { class: "data", id: id + "-table" });
    table(t, ["system", { text: r.column, num: true },
      { text: "rank (" + level(r.confidence) + ")", num: true }, "group"],
      r.systems.map((x) => [x.system, { text: x.shown_mean, cls: "num" }, { text: x.rank, cls: "num" }, x.letters]));
    return [head, el("div", { class: "scroll" }, t), el("p", { class: "muted", text: r.note })];
  }

  // A grid family's comparisons as grids (rows: strategies, columns: retriever pairs; then
  // rows: strategy pairs, columns: retrievers), above the table of every pair.
  function renderComparisonGrids() {
    const grids = DATA.comparison_grids || [];
    const anchor = document.getElementById("chart-compare");
    if (!grids.length || !anchor) return;
    const m = DATA.metric;
    const rule = DATA.comparison_rule;
    const box = el("div", { id: "compare-grids" });
    grids.forEach((g) => {
      const title = g.title.charAt(0).toUpperCase() + g.title.slice(1);
      box.append(el("h3", { text: title + " on " + m + " (A − B" + (diffUnit(m) ? ", " + diffUnit(m) : "") + ")" }));
      if (rule) box.append(el("p", { class: "muted", text: rule.header + "." }));
      const t = el("table", { class: "data grid-compare" });
      table(t, [g.corner].concat(g.columns.map((c) => ({ text: c, num: true }))),
        g.rows.map((label, i) => [label].concat(g.cells[i].map((k, j) => {
          if (k === null) return { text: "–", cls: "num" };
          const c = DATA.comparisons[k];
          const shown = c.shown || {};
          const p = shown.p ? "; p " + shown.p : "";
          return { cls: "num", title: c.a + " − " + c.b + ": " + c.verdict + p, node: el("span", null,
            shown.difference, el("br"),
            el("span", { class: "tag " + (c.separated ? "sep" : "tie"), text: g.verdicts[i][j] })) };
        }))));
      box.append(el("div", { class: "scroll" }, t));
    });
    anchor.before(box);
  }

  // ------------------------------------------------------------------ sample size

  function renderSampleSize() {
    const ss = DATA.sample_size;
    const m = ss.metric;
    const unit = diffUnit(m) ? " " + diffUnit(m) : "";
    const target = diffScaled(m, ss.target) + unit;
    const lead = document.getElementById("size-lead");
    const best = DATA.headline.best;
    const first = ss.systems.find((r) => r.system === best && r.half_width !== null) ||
      ss.systems.find((r) => r.half_width !== null);
    let text = "Resampling the questions up to larger sets shows the interval each size would give " +
      "(solid). The half-width shrinks with 1/√n (dashed): halving it costs four times the " +
      "questions. The questions needed for ± " + target + " are n = ⌈(1.96·sd / h)²⌉ " +
      "with sd the spread of the per-question scores.";
    lead.textContent = text;
    if (first) {
      append(lead, [" On " + first.n + " questions, ", el("span", { text: first.system }),
        " carries ± " + first.half_width_text + (diffUnit(m) ? " " + diffUnit(m) : "") + " on " + m + "; ± " +
        target + " would take about " + int(first.needed || 0) + "."]);
    }
    if (ss.family) append(lead, [" " + ss.family]);
    const sizes = [];
    ss.systems.forEach((r) => r.rows.forEach((row) => { if (sizes.indexOf(row.n) < 0) sizes.push(row.n); }));
    sizes.sort((a, b) => a - b);
    const head = ["system", { text: "sd", num: true }]
      .concat(sizes.map((n) => ({ text: "± at " + int(n), num: true })))
      .concat([{ text: "questions for ± " + target, num: true }]);
    table("size-table", head, ss.systems.map((r) => {
      const by = {};
      r.rows.forEach((row) => { by[row.n] = row.half_width_text; });
      return [{ text: r.system, cls: "name" }, { text: r.sd.toFixed(3), cls: "num" }]
        .concat(sizes.map((n) => ({ text: by[n] === undefined ? "" : by[n], cls: "num" })))
        .concat([{ text: r.needed ? int(r.needed) : "–", cls: "num best" }]);
    }));
  }

  // ------------------------------------------------------------------ optional sections

  function gradeSpan(g) {
    return el("span", { class: "gr-" + g, text: g });
  }

  function renderAnswers() {
    const a = OPT.answers;
    if (!a) return;
    const sec = document.getElementById("answers");
    sec.hidden = false;
    const body = document.getElementById("answers-body");
    append(body, el("p", { class: "lead", text: "A reader model" + (a.reader ? " (" + a.reader + ")" : "") +
      " answered each question from the top " + a.k + " results; " +
      (a.primary ? "the judge " + a.primary + " graded each answer against the answer passage." :
        "no judge grades were found.") }));
    append(body, el("h3", { text: "Answer accuracy" }));
    const acc = el("table", { class: "data", id: "answers-table" });
    const anyFixed = a.accuracy.some((r) => r.corrected);
    const correct = (a.titles || {}).correct || "correct"; // the metric table's title
    const accHead = ["system", { text: correct + " (%) [" + LEVEL + " CI]", num: true }];
    if (anyFixed) accHead.push({ text: "judge-corrected (%) [" + LEVEL + " CI]", num: true,
      title: "judge's accuracy on all answers + mean(hand − judge) on the hand-graded ones; " +
        "a normal interval (no draws), widened for few hand grades" });
    table(acc, accHead.concat([{ text: "correct", num: true },
      { text: "partial", num: true }, { text: "wrong", num: true }, { text: "unscored", num: true },
      { text: "passage in top " + a.k + " (%)", num: true,
        title: "hit rate at the reader's k, over the answered questions only" }]),
    a.accuracy.map((r) => {
      const cells = [{ text: r.system, cls: "name" }, { text: fmtEst(r.correct, "recall@1"), cls: "num" }];
      if (anyFixed) cells.push({ text: r.corrected ? fmtEst(r.corrected, "recall@1") + " (" +
        r.corrected.n_hand + " by hand)" : "–", cls: "num" });
      return cells.concat([{ text: r.counts.correct, cls: "num" }, { text: r.counts.partial, cls: "num" },
        { text: r.counts.wrong, cls: "num" },
        { text: r.counts.unscored + (r.ungraded ? " (+" + r.ungraded + " ungraded)" : ""), cls: "num" },
        { text: fmtEst(r.found, "recall@1"), cls: "num" }]);
    }));
    append(body, el("div", { class: "scroll" }, acc));
    if (a.reruns) append(body, el("p", { class: "muted", text: "Each answer was graded " + a.reruns +
      " times: a share is the mean over questions of each question's mean over its " + a.reruns +
      " reruns, and its interval resamples whole questions with their " + a.reruns +
      " reruns; the grade counts are rerun 0's." }));
    renderSaving(body, a.saving);
    renderAnswerVerdicts(body, a.verdicts);
    renderAnswerFlips(body, a.flips);

    append(body, el("h3", { text: "Passage found × answer grade" }));
    append(body, el("p", { class: "lead", text: "Columns: whether the answer passage was in the top " +
      a.k + " results the reader was given, over the answered questions. A found passage does not guarantee a right " +
      "answer, and a missed one does not rule it out: the bold cells are where the two " +
      "scores drift apart." }));
    const cross = el("table", { class: "data", id: "cross-table" });
    const anyUnscored = a.cross.some((c) => c.table.found.unscored + c.table.missed.unscored > 0);
    const labels = anyUnscored ? ["correct", "partial", "wrong", "unscored"] : ["correct", "partial", "wrong"];
    const crossHead = ["system"];
    ["found", "missed"].forEach((kind) => labels.forEach((g) => crossHead.push({
      text: kind + " · " + g, num: true,
      title: "passage " + kind + " in the top " + a.k + ", answer " + g })));
    table(cross, crossHead, a.cross.map((c) => [{ text: c.system, cls: "name" }].concat(
      ["found", "missed"].reduce((cells, kind) => cells.concat(labels.map((g) => ({
        text: c.table[kind][g], cls: "num" + ((kind === "found") !== (g === "correct") && g !== "unscored" ? " best" : ""),
      }))), []))));
    append(body, el("div", { class: "scroll" }, cross));

    if (a.agreement.length || a.hand.length) {
      append(body, el("h3", { text: "Judge agreement" }));
      append(body, el("p", { class: "lead", text: "Agreement on correct-or-not over the answers both " +
        "graded, with Cohen's kappa; the hand rows check each judge against hand grades " +
        "(lenient: the judge passed an answer the hand grade did not). The weighted kappa is on " +
        "the three grades, linear weights: partial against correct or wrong counts half a disagreement." }));
      const ag = el("table", { class: "data", id: "agreement-table" });
      const agRows = a.agreement.map((r) => [r.a, r.b, { text: r.n, cls: "num" },
        { text: fmtShare(r.percent), cls: "num" }, { text: fmtEst(r.kappa, "kappa"), cls: "num" },
        { text: fmtEst(r.kappa_weighted), cls: "num" },
        { text: r.more_correct === undefined ? "" : (r.more_correct >= 0 ? "+" : "") + r.more_correct, cls: "num" },
        "", ""]);
      a.hand.forEach((r) => agRows.push([r.a, "hand", { text: r.n, cls: "num" },
        { text: fmtShare(r.percent), cls: "num" }, { text: fmtEst(r.kappa, "kappa"), cls: "num" }, "",
        { text: (r.more_correct >= 0 ? "+" : "") + r.more_correct, cls: "num" },
        { text: r.lenient, cls: "num" }, { text: r.strict, cls: "num" }]));
      table(ag, ["rater A", "rater B", { text: "answers", num: true }, { text: "agree [" + LEVEL + " CI]", num: true },
        { text: "kappa [" + LEVEL + " CI]", num: true },
        { text: "weighted kappa, 3 grades [" + LEVEL + " CI]", num: true }, { text: "A − B correct", num: true },
        { text: "lenient", num: true }, { text: "strict", num: true }], agRows);
      append(body, el("div", { class: "scroll" }, ag));
    }
    renderJudgeReliability(body, a.reliability);
  }

  // What `ragmeter judges` prints beyond pairs: Krippendorff's alpha over three or more
  // judges, each judge against itself over reruns, and each judge's position check.
  function renderJudgeReliability(body, r) {
    if (!r) return;
    if (r.alpha) {
      append(body, el("p", { class: "lead", id: "judge-alpha", text: "Krippendorff's alpha (ordinal), all " +
        r.alpha.judges + " judges [" + LEVEL + " CI]: " + fmtEst(r.alpha) + ", over the " + r.alpha.n +
        " answers graded by two or more." }));
    }
    if (r.retest) {
      append(body, el("h3", { text: "Each judge against itself: rerun 0 vs the other " +
        (r.retest_reruns - 1) + " reruns of the same answers" }));
      const tab = el("table", { class: "data", id: "judge-retest" });
      table(tab, ["judge", { text: "answers", num: true },
        { text: "same grade [" + LEVEL + " CI]", num: true },
        { text: "alpha, ordinal [" + LEVEL + " CI]", num: true }],
      r.retest.map((x) => [{ text: x.judge, cls: "name" }, { text: x.answers, cls: "num" },
        { text: fmtShare(x.percent), cls: "num" }, { text: fmtEst(x.alpha), cls: "num" }]));
      append(body, el("div", { class: "scroll" }, tab));
    }
    if (r.position) {
      const p0 = r.position[0];
      append(body, el("h3", { text: "Position check: " + p0.sampled + " sampled answers (seed " +
        p0.seed + ") graded again with " + p0.order }));
      const tab = el("table", { class: "data", id: "judge-position" });
      table(tab, ["judge", { text: "answers", num: true }, { text: "changed", num: true },
        { text: "kappa, 3 grades [" + LEVEL + " CI]", num: true },
        { text: "weighted kappa [" + LEVEL + " CI]", num: true },
        { text: "given − other correct", num: true }],
      r.position.map((x) => [{ text: x.judge, cls: "name" }, { text: x.answers, cls: "num" },
        { text: x.changed, cls: "num" }, { text: fmtEst(x.kappa), cls: "num" },
        { text: fmtEst(x.kappa_weighted), cls: "num" },
        { text: (x.more_correct >= 0 ? "+" : "") + x.more_correct, cls: "num" }]));
      append(body, el("div", { class: "scroll" }, tab));
    }
  }

  // The paired verdicts on answers that `ragmeter grade` prints: one table per measure, built
  // as the search's comparisons are, with the rule line, the notes and what the pairs are over.
  function renderAnswerVerdicts(body, v) {
    if (!v) return;
    append(body, el("h3", { text: "Paired verdicts on the answers" }));
    v.tables.forEach((t, i) => {
      append(body, el("p", { class: "lead", text: "Systems compared on the same questions, on " +
        (t.title || t.measure) + " (judged by " + v.judge + ", seed " + v.seed + ", " + v.rounds + " rounds). " +
        t.rule.header + "." + (t.note ? " " + t.note : "") }));
      const tab = el("table", { class: "data", id: "answer-verdicts-" + i });
      comparisonTable(tab, t.rows, t.rule, t.difference_unit, false);
      append(body, el("div", { class: "scroll" }, tab));
      if (t.ranks) append(body, ranksBlock(t.ranks, "answer-ranks-" + i));
    });
    v.notes.forEach((n) => append(body, el("p", { class: "muted", text: n })));
    append(body, el("p", { class: "muted", id: "answer-verdicts-basis", text: v.basis }));
    (v.corrected || []).forEach((t, i) => renderCorrected(body, t, "answer-corrected-" + i));
  }

  // A table `grade` prints, sent whole from Python (answers.corrected): its title, columns,
  // each row's cells and the lines under it; the first column names, the rest are numbers
  // up to `last` (the verdict, when there is one, is drawn as the comparisons draw it).
  function textTable(body, t, id, last) {
    append(body, el("h3", { id: id + "-title", text: t.title }));
    const tab = el("table", { class: "data", id: id });
    table(tab, t.head.map((h, j) => ({ text: h, num: j > 0 && j <= last })),
      t.rows.map((r) => r.cells.map((c, j) => (j === 0 ? { text: c, cls: "name" } :
        j <= last ? { text: c, cls: "num" } : { cls: "verdict", node: el("span",
          { class: "tag " + (r.separated ? "sep" : "tie") }, r.winner ? [el("span",
            { class: "name", text: r.winner }), c.slice(r.winner.length)] : c) }))));
    append(body, el("div", { class: "scroll" }, tab));
  }

  // The paired verdicts on one measure, corrected by the hand grades.
  function renderCorrected(body, t, id) {
    textTable(body, t, id, t.head.length - 2);
    t.lines.forEach((line) => append(body, el("p", { class: "muted", text: line })));
  }

  // What the judge saved: the weight, the hand grades used and what they are worth, the bound.
  function renderSaving(body, s) {
    if (!s) return;
    textTable(body, s, "answer-saving", s.head.length - 1);
    append(body, el("p", { class: "muted", text: s.caption.charAt(0).toUpperCase() + s.caption.slice(1) + "." }));
    s.warnings.forEach((w) => append(body, el("p", { class: "warn", text: w })));
  }

  // With reruns: each system's mean flip rate and the reruns' share of its accuracy's variance.
  function renderAnswerFlips(body, f) {
    if (!f) return;
    append(body, el("h3", { text: "Flip rate of " + f.reruns + " reruns, judged by " + f.judge }));
    const tab = el("table", { class: "data", id: "answer-flips" });
    table(tab, ["system", { text: "mean flip rate (%)", num: true },
      { text: "reruns' share of variance (%) [" + LEVEL + " CI]", num: true },
      { text: "questions that flip", num: true }, { text: "questions", num: true }],
    f.rows.map((r) => [{ text: r.system, cls: "name" }, { text: r.rate, cls: "num" },
      { text: r.share, cls: "num" }, { text: r.flipping, cls: "num" }, { text: r.questions, cls: "num" }]));
    append(body, el("div", { class: "scroll" }, tab));
    append(body, el("p", { class: "muted", text: f.caption.charAt(0).toUpperCase() + f.caption.slice(1) + "." }));
  }

  // Text cut into [piece, kind] runs; a kind is drawn as <mark class="f-KIND">.
  function segmentsNode(cls, segs) {
    const box = el("div", { class: cls });
    segs.forEach((s) => {
      if (s[1]) box.append(el("mark", { class: "f-" + s[1], text: s[0] }));
      else box.append(document.createTextNode(s[0]));
    });
    return box;
  }

  function failureCase(f, c) {
    const box = el("div", { class: "failcase", "data-system": c.system, "data-question": c.question });
    box.append(el("div", { class: "itemhead" }, el("b", { text: c.system }), " · ",
      el("a", { href: "#q/" + encodeURIComponent(c.question), text: c.question }), " ",
      c.failures.map((k) => el("span", { class: "chip flag", text: f.labels[k] })),
      c.grade ? [" graded ", gradeSpan(c.grade)] : null, " ",
      el("span", { class: "chip " + (c.hit ? "hit" : "miss"), text: c.hit ? "passage in top " + f.k : "passage missed" })));
    box.append(el("b", { text: "Answer" }), segmentsNode("answerbox", c.answer));
    if (c.changed.length) {
      box.append(el("p", { text: "Changed: " + c.changed.map((x) => x[0] + " (reference: " + x[1] + ")")
        .join("; ") }));
    }
    if (c.unsupported.length) {
      box.append(el("p", { text: "Unsupported: " + c.unsupported.map((u) => "\u201c" + u[0] + "\u201d (" +
        Math.round(u[1] * 100) + "% of its words in one passage)").join("; ") }));
    }
    box.append(el("b", { text: "Answer passage" }), segmentsNode("passage", c.reference));
    return box;
  }

  function renderFailures() {
    const f = OPT.failures;
    if (!f) return;
    document.getElementById("failures").hidden = false;
    const body = document.getElementById("failures-body");
    const LIMIT = 100;
    append(body, el("p", { class: "lead", text: "Every answer checked without a model against its answer " +
      "passage and the top " + f.k + " passages the reader saw: a refusal while the passage was there, a number " +
      "changed or left out, a sentence with under " + Math.round(f.threshold * 100) + "% of its content words " +
      "in any one passage, and an answer graded correct" + (f.judge ? " by " + f.judge : "") +
      " although search missed the passage. Each cell: the count, then the share of the system's answers (%) " +
      "with its " + level(f.confidence) + " bootstrap interval (seed " + f.seed + ", " + f.rounds + " rounds). Choose a count to list " +
      "its answers." }));
    const sysSel = el("select", { id: "failure-system" }, el("option", { value: "", text: "all systems" }),
      f.systems.map((r) => el("option", { value: r.system, text: r.system })));
    const kindSel = el("select", { id: "failure-kind" }, el("option", { value: "", text: "any failure" }),
      f.order.filter((k) => k !== "any").map((k) => el("option", { value: k, text: f.labels[k] })));
    const list = el("div", { id: "failure-cases" });
    function show() {
      const s = sysSel.value;
      const k = kindSel.value;
      const picked = f.cases.filter((c) => (!s || c.system === s) &&
        (k ? c.failures.indexOf(k) >= 0 : c.failures.length > 0));
      list.replaceChildren(el("p", { class: "muted", id: "failure-count", text: picked.length +
        (picked.length === 1 ? " answer" : " answers") + (picked.length > LIMIT ? "; the first " + LIMIT + " shown" : "") }));
      picked.slice(0, LIMIT).forEach((c) => list.append(failureCase(f, c)));
    }
    sysSel.addEventListener("change", show);
    kindSel.addEventListener("change", show);
    const tbl = el("table", { class: "data", id: "failures-table" });
    // one row per failure type, one column per system: count: % of answers [95% CI]
    table(tbl, ["failure"].concat(f.systems.map((r) => ({ text: r.system, num: true }))),
    [["answers"].concat(f.systems.map((r) => ({ text: r.n, cls: "num" })))].concat(f.order.map((k) =>
      [f.labels[k]].concat(f.systems.map((r) => ({
        cls: "num", node: el("button", { type: "button", class: "cell", "data-system": r.system, "data-kind": k,
          title: "list these answers", text: r.counts[k] + ": " + fmtEst(r.rates[k]),
          onclick: () => { sysSel.value = r.system; kindSel.value = k === "any" ? "" : k; show(); } }) }))))));
    append(body, el("div", { class: "scroll" }, tbl));
    if (f.leniency.some((j) => j.flagged)) {
      append(body, el("h3", { text: "Judges passing a changed or missing number" }));
      const len = el("table", { class: "data", id: "leniency-table" });
      table(len, ["judge", { text: "answers flagged", num: true }, { text: "graded correct", num: true },
        { text: "passed (%) [" + level(f.confidence) + " CI]", num: true }], f.leniency.map((j) => [j.judge,
        { text: j.flagged, cls: "num" }, { text: j.passed, cls: "num" }, { text: fmtEst(j.rate), cls: "num" }]));
      append(body, el("div", { class: "scroll" }, len));
    }
    if (f.precision.some((p) => p.hand_graded)) {
      append(body, el("h3", { text: "Checks against the hand grades" }));
      const pr = el("table", { class: "data", id: "failure-precision" });
      table(pr, ["check", { text: "flagged and hand-graded", num: true }, { text: "not correct by hand", num: true },
        { text: "precision (%)", num: true }], f.precision.map((p) => [f.labels[p.failure],
        { text: p.hand_graded, cls: "num" }, { text: p.confirmed, cls: "num" },
        { text: p.hand_graded ? (100 * p.confirmed / p.hand_graded).toFixed(0) : "–", cls: "num" }]));
      append(body, el("div", { class: "scroll" }, pr));
    }
    append(body, el("h3", { text: "The answers" }));
    append(body, el("div", { class: "controls" }, el("label", null, "System ", sysSel),
      el("label", null, "Failure ", kindSel)));
    append(body, el("p", { class: "muted" }, "Marked: ", el("mark", { class: "f-changed", text: "a changed number" }),
      ", ", el("mark", { class: "f-missing", text: "a reference number the answer left out" }), ", ",
      el("mark", { class: "f-same", text: "one it states the same" }), ", ",
      el("mark", { class: "f-number", text: "one the question gives" }), " and ",
      el("mark", { class: "f-unsupported", text: "a sentence without support" }), "."));
    append(body, list);
    show();
  }

  function renderAudit() {
    const a = OPT.audit;
    if (!a) return;
    document.getElementById("audit").hidden = false;
    const body = document.getElementById("audit-body");
    append(body, el("p", { class: "lead", text: a.flagged + " of " + a.questions + " questions are " +
      "flagged (" + a.audited + " audited)" + (a.source ? "; questions from " + a.source : "") +
      ". A broken question can hide inside a normal-looking average: compare the score on the " +
      "clean questions with the score on all of them." }));
    const counts = el("table", { class: "data", id: "audit-flags" });
    table(counts, ["flag", { text: "questions", num: true }],
      Object.keys(a.counts).map((f) => [f, { text: a.counts[f], cls: "num" }]));
    append(body, el("div", { class: "scroll" }, counts));
    const m = a.metric;
    const bys = el("table", { class: "data", id: "audit-scores" });
    table(bys, ["system", { text: m + " all", num: true }, { text: m + " clean only", num: true },
      { text: m + " flagged only", num: true }],
    a.by_system.map((r) => [{ text: r.system, cls: "name" }, { text: fmtEst(r.all, m), cls: "num" },
      { text: fmtEst(r.clean, m), cls: "num" }, { text: fmtEst(r.flagged, m), cls: "num" }]));
    append(body, el("div", { class: "scroll" }, bys));
    append(body, el("p", { class: "muted", text: "Flagged questions are marked in the question list below; " +
      "choose \u201cflagged by the audit\u201d to list only them." }));
  }

  // ------------------------------------------------------------------ run history

  // What the trend says of a run besides its change: a rename, another branch.
  function historyNotes(p) {
    let out = "";
    if (p.renamed_from) out += "named " + p.name + " here (was " + p.renamed_from + "). ";
    if (p.other_branch) out += "on " + (p.branch ? "branch " + p.branch : "another branch") +
      ", not in the checked-out commit's history. ";
    return out;
  }

  function renderHistory() {
    const h = OPT.history;
    if (!h) return;
    document.getElementById("history").hidden = false;
    const body = document.getElementById("history-body");
    append(body, el("p", { class: "lead", text: "This run among the " + h.runs + " recorded runs " +
      "that measured the same thing (corpus, test set, answer keys and settings)" +
      (h.other ? "; " + h.other + " other recorded runs measured something else and are left out" : "") +
      ". The band is each run's " + level(h.confidence) + " interval of " + h.metric + "; a point's colour is the paired " +
      "change from the run before it (questions paired by id, under the rule ragmeter check uses). " +
      "History file: " + h.path + "." }));
    // the section's one system select: the table's system and the chart's (its parameter)
    const sel = el("select", { id: "history-system" },
      h.systems.map((s) => el("option", { value: s, text: s, selected: s === h.default })));
    append(body, el("div", { class: "controls" }, el("label", null, "System ", sel)));
    CHART_SETUP["chart-history"] = (view) => view.signal("history_system", sel.value).runAsync();
    function show() {
      const view = CHART_VIEWS["chart-history"];
      if (view) CHART_SETUP["chart-history"](view);
      const points = h.series[sel.value] || [];
      table("history-table", ["run", "commit", "branch", "recorded (UTC)",
        { text: h.metric + " [" + level(h.confidence) + " CI]", num: true }, { text: "change [CI]", num: true }, "verdict"],
      points.slice().reverse().map((p) => [
        p.run + (p.current ? " (this run)" : ""),
        p.commit ? p.commit.slice(0, 7) + (p.dirty ? " (dirty)" : "") : "",
        p.branch,
        p.recorded_at.replace("T", " ").replace("+00:00", ""),
        { text: p.shown, cls: "num" },
        { text: p.change ? p.change.shown + " from run " + p.change.earlier : "", cls: "num" },
        { text: historyNotes(p) + (p.change ? p.change.verdict : "first run"), cls: "verdict-" + p.direction.replace(" ", "-") },
      ]));
    }
    sel.addEventListener("change", show);
    show();
  }

  // ------------------------------------------------------------------ drill-down

  // The text of DOCS[docIdx] between UTF-16 offsets start and end: the page holds only the
  // parts of each document that it shows ([start, text] pairs), one of which covers it.
  function spanText(docIdx, start, end) {
    const part = DOCS[docIdx].parts.find((p) => p[0] <= start && end <= p[0] + p[1].length);
    return part ? part[1].slice(start - part[0], end - part[0]) : "";
  }

  function highlighted(docIdx, start, end, answers) {
    const text = spanText(docIdx, start, end);
    const ranges = answers
      .filter((a) => a[0] === docIdx)
      .map((a) => [Math.max(start, a[1]) - start, Math.min(end, a[2]) - start])
      .filter((r) => r[0] < r[1])
      .sort((x, y) => x[0] - y[0]);
    const merged = [];
    ranges.forEach((r) => {
      const last = merged[merged.length - 1];
      if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]);
      else merged.push([r[0], r[1]]);
    });
    const box = el("div", { class: "itemtext" });
    let pos = 0;
    merged.forEach((r) => {
      if (r[0] > pos) box.append(document.createTextNode(text.slice(pos, r[0])));
      box.append(el("mark", { text: text.slice(r[0], r[1]) }));
      pos = r[1];
    });
    if (pos < text.length) box.append(document.createTextNode(text.slice(pos)));
    return box;
  }

  const GRADE_TEXT = { 2: "2 · whole passage", 1: "1 · part", 0: "0" };

  function questionBody(q) {
    const body = el("div", { class: "qbody" });
    body.append(el("h4", { text: q.answers.length > 1 ? "Answer passages" : "Answer passage" }));
    q.answers.forEach((a) => {
      body.append(el("div", { class: "passage" },
        el("span", { class: "src", text: DOCS[a[0]].id + " · characters " + a[1] + "–" + a[2] }), a[3]));
    });
    if (q.audit) {
      body.append(el("p", null, el("b", { text: "Audit: " }),
        q.audit.flags.length ? q.audit.flags.join(", ") : "no flags",
        q.audit.note ? " — " + q.audit.note : ""));
    }
    const grid = el("div", { class: "systems" });
    SYSTEMS.forEach((s, i) => {
      const box = el("div", { class: "system", "data-system": s });
      box.append(el("h4", null, el("span", { text: s }),
        el("span", { class: "chip " + (q.hit[i] ? "hit" : "miss"),
          text: (q.hit[i] ? "found in top " : "missed in top ") + kOf(DATA.hit_metric) }),
        DATA.metric !== DATA.hit_metric ? el("span", { class: "muted", text: DATA.metric + " = " + q.score[i] }) : null));
      const ma = q.model_answers && q.model_answers[i];
      if (ma) {
        const grades = Object.keys(ma.grades).map((j) => [j + ": ", gradeSpan(ma.grades[j]), " "]);
        box.append(el("div", { class: "answerbox" }, el("b", { text: "Answer: " }), ma.answer));
        box.append(el("div", { class: "itemhead" }, grades, ma.hand ? ["hand: ", gradeSpan(ma.hand)] : null));
      }
      const list = el("ol", { class: "items" });
      q.items[i].forEach((it, r) => {
        list.append(el("li", { class: "item" },
          el("div", { class: "itemhead" },
            el("b", { text: "#" + (r + 1) }),
            el("span", { class: "grade g" + it[3], text: "grade " + (GRADE_TEXT[it[3]] || it[3]) }),
            el("span", { text: DOCS[it[0]].id }),
            el("span", { text: it[4] + " words" }),
            el("span", { text: "score " + it[5] })),
          highlighted(it[0], it[1], it[2], q.answers)));
      });
      if (!q.items[i].length) list.append(el("li", { class: "muted", text: "no results" }));
      box.append(list);
      grid.append(box);
    });
    body.append(grid);
    return body;
  }

  function scrollMarks(body) {
    body.querySelectorAll(".itemtext").forEach((box) => {
      const mark = box.querySelector("mark");
      if (mark) box.scrollTop = Math.max(0, mark.offsetTop - box.offsetTop - 8);
    });
  }

  const FILTERS = [
    ["all", "all questions", () => true],
    ["miss-any", "missed by at least one system", (q) => q.hit.some((h) => !h)],
    ["miss-all", "missed by every system", (q) => q.hit.every((h) => !h)],
    ["disagree", "systems disagree", (q) => q.hit.some((h) => h) && q.hit.some((h) => !h)],
  ];
  if (OPT.audit) FILTERS.push(["flagged", "flagged by the audit", (q) => q.audit && q.audit.flags.length > 0]);
  if (OPT.answers) {
    FILTERS.push(["found-wrong", "passage found, answer not correct", (q) =>
      (q.model_answers || []).some((a, i) => a && q.hit[i] && a.grades[OPT.answers.primary] !== "correct")]);
  }

  const state = { query: "", filter: "all", page: 0, shown: [] };
  const SEARCH = QUESTIONS.map((q) => (q.id + "\n" + q.text).toLowerCase());

  function questionRow(idx) {
    const q = QUESTIONS[idx];
    const d = el("details", { class: "q", id: "question-" + idx, "data-qid": q.id });
    const chips = el("span", { class: "chips" }, SYSTEMS.map((s, i) =>
      el("span", { class: "chip " + (q.hit[i] ? "hit" : "miss"), title: s + ": " + DATA.hit_metric + " = " + q.hit[i], text: s })));
    if (q.audit && q.audit.flags.length) chips.append(el("span", { class: "chip flag", text: q.audit.flags.join(", ") }));
    d.append(el("summary", null, el("span", { class: "qid", text: q.id }),
      el("span", { class: "qtext", text: q.text }), chips));
    d.addEventListener("toggle", () => {
      if (d.open && !d.dataset.built) {
        const body = questionBody(q);
        d.append(body);
        d.dataset.built = "1";
        scrollMarks(body);
      }
    });
    return d;
  }

  function renderQuestions() {
    const query = state.query.trim().toLowerCase();
    const f = FILTERS.find((x) => x[0] === state.filter) || FILTERS[0];
    const shown = [];
    for (let i = 0; i < QUESTIONS.length; i++) {
      if (query && SEARCH[i].indexOf(query) < 0) continue;
      if (!f[2](QUESTIONS[i])) continue;
      shown.push(i);
    }
    state.shown = shown;
    const size = DATA.page_size;
    const pages = Math.max(1, Math.ceil(shown.length / size));
    state.page = Math.min(Math.max(0, state.page), pages - 1);
    const list = document.getElementById("q-list");
    list.replaceChildren();
    shown.slice(state.page * size, (state.page + 1) * size).forEach((i) => list.append(questionRow(i)));
    document.getElementById("q-count").textContent = shown.length + " of " + QUESTIONS.length + " questions";
    document.getElementById("q-page").textContent = "page " + (state.page + 1) + " of " + pages;
    document.getElementById("q-prev").disabled = state.page === 0;
    document.getElementById("q-next").disabled = state.page >= pages - 1;
    if (!shown.length) list.append(el("p", { class: "muted", text: "No question matches." }));
  }

  function setupQuestions() {
    if (DATA.drilldown_note) document.getElementById("q-held").textContent = DATA.drilldown_note;
    const select = document.getElementById("q-filter");
    FILTERS.forEach((f) => select.append(el("option", { value: f[0], text: f[1] })));
    const search = document.getElementById("q-search");
    let timer = null;
    search.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => { state.query = search.value; state.page = 0; renderQuestions(); }, 120);
    });
    select.addEventListener("change", () => { state.filter = select.value; state.page = 0; renderQuestions(); });
    document.getElementById("q-prev").addEventListener("click", () => { state.page--; renderQuestions(); });
    document.getElementById("q-next").addEventListener("click", () => {
      state.page++;
      renderQuestions();
      document.getElementById("questions").scrollIntoView();
    });
    renderQuestions();
    openFromHash();
    window.addEventListener("hashchange", openFromHash);
  }

  function openFromHash() {
    const h = window.location.hash;
    if (h.slice(0, 3) !== "#q/") return;
    const id = decodeURIComponent(h.slice(3));
    const idx = QUESTIONS.findIndex((q) => q.id === id);
    if (idx < 0) return;
    const search = document.getElementById("q-search");
    search.value = id;
    state.query = id;
    state.filter = "all";
    document.getElementById("q-filter").value = "all";
    state.page = 0;
    renderQuestions();
    const d = document.getElementById("question-" + idx);
    if (d) { d.open = true; d.scrollIntoView(); }
  }

  // ------------------------------------------------------------------ charts and footer

  // The Vega view of each drawn chart, and what a section sets on its chart once drawn.
  const CHART_VIEWS = {};
  const CHART_SETUP = {};

  function renderCharts() {
    const charts = DATA.charts || {};
    const ids = Object.keys(charts);
    ids.forEach((id) => { const host = document.getElementById(id); if (host) host.dataset.state = "pending"; });
    document.querySelectorAll(".chart").forEach((host) => { if (!charts[host.id]) host.hidden = true; });
    if (typeof window.vegaEmbed !== "function") {
      ids.forEach((id) => { const h = document.getElementById(id); if (h) h.textContent = "Charts need the inlined Vega bundle, which is missing."; });
      return;
    }
    const opts = { renderer: "svg", actions: { export: true, source: false, compiled: false, editor: false } };
    const jobs = ids.map((id) => {
      const host = document.getElementById(id);
      if (!host) return Promise.resolve();
      return window.vegaEmbed(host, charts[id], opts).then((res) => {
        CHART_VIEWS[id] = res.view;
        return CHART_SETUP[id] ? CHART_SETUP[id](res.view) : null;
      }).then(() => {
        host.dataset.state = "rendered";
      }).catch((err) => {
        host.dataset.state = "failed";
        host.textContent = "This chart could not be drawn: " + (err && err.message ? err.message : err);
        console.error("chart " + id + ": " + err);
      });
    });
    Promise.all(jobs).then(() => {
      document.documentElement.dataset.charts = "ready";
      if (window.performance && performance.mark) performance.mark("ragmeter-charts-ready");
    });
  }

  function renderFooter() {
    const v = DATA.versions;
    const parts = Object.keys(v).sort().map((k) => k + " " + v[k]);
    document.getElementById("footer").textContent = "Made by ragmeter from the saved results; nothing " +
      "was re-run. Versions: " + parts.join(", ") + ".";
  }

  renderNav();
  renderSummary();
  renderRoute();
  renderMeasures();
  renderComparisons();
  renderComparisonGrids();
  renderSampleSize();
  renderAnswers();
  renderFailures();
  renderAudit();
  renderHistory();
  setupQuestions();
  renderFooter();
  renderCharts();
})();
