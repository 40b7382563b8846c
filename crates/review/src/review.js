// The review page's behaviour: select a claim to see its evidence, move from problem to
// problem, filter by kind and status. Text from drafts and evidence is only ever set as text
// (textContent, text nodes), never as HTML.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("review-data").textContent);
  var claims = data.claims, pages = data.pages;
  var body = document.getElementById("ev-body");
  var first = new Array(claims.length);
  var all = document.querySelectorAll("#draft mark.c[data-i]");
  for (var n = 0; n < all.length; n++) {
    var i = +all[n].getAttribute("data-i");
    if (!first[i]) first[i] = all[n];
  }
  // Claims in draft order: the order of their first marks.
  var order = [];
  for (n = 0; n < all.length; n++) {
    if (all[n].id) order.push(+all[n].getAttribute("data-i"));
  }
  var selected = -1;
  var filter = { kind: "", status: "" };

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }
  // Text with highlighted ranges (UTF-16 offsets), as text nodes and <mark>s.
  function highlighted(text, ranges) {
    var pre = el("pre");
    var at = 0, firstMark = null;
    (ranges || []).slice().sort(function (a, b) { return a[0] - b[0]; }).forEach(function (r) {
      if (r[0] < at) return;
      pre.appendChild(document.createTextNode(text.slice(at, r[0])));
      var m = el("mark", null, text.slice(r[0], r[1]));
      if (!firstMark) firstMark = m;
      pre.appendChild(m);
      at = r[1];
    });
    pre.appendChild(document.createTextNode(text.slice(at)));
    return { pre: pre, mark: firstMark };
  }
  function where(f, p, b) {
    return f + ", page " + p + (b ? " (" + b + ")" : "");
  }
  function icon(s) {
    return { supported: "✓", unsupported: "✗", miscited: "≠", unrecognized: "?" }[s] || "•";
  }
  function missingNote(file) {
    for (var k = 0; k < data.missing.length; k++) {
      if (data.missing[k][0] === file) return data.missing[k];
    }
    return null;
  }

  function show(i) {
    var c = claims[i];
    body.textContent = "";
    var head = el("p", "status s-" + c.s);
    head.appendChild(el("span", null, icon(c.s) + " " + c.s));
    head.appendChild(document.createTextNode(" · " + c.k + " · line " + c.l));
    body.appendChild(head);
    body.appendChild(el("p", "claim", c.t));
    if (c.r) body.appendChild(el("p", "reason", c.r));
    var scrollTo = null;
    if (c.src) {
      body.appendChild(el("h3", "where", "Supported by " + where(c.src.f, c.src.p, c.src.b)));
      if (c.pg !== undefined) {
        var pg = pages[c.pg];
        if (pg.img) {
          var img = el("img");
          img.src = pg.img;
          img.alt = "Scan of page " + pg.p + " of " + pg.f;
          body.appendChild(img);
          body.appendChild(el("p", "where", "Text read from the scan (OCR):"));
        }
        var h = highlighted(pg.t, c.hl);
        body.appendChild(h.pre);
        scrollTo = h.mark;
        if (!h.mark) body.appendChild(el("p", null, "The match could not be located in the page's text; the verifier found: " + c.src.snip));
      } else {
        var miss = missingNote(c.src.f);
        body.appendChild(el("p", "reason missing", "The source file " + c.src.f + " is missing: it has moved or been deleted since the verification" + (miss ? " (" + miss[1] + ")" : "") + "."));
        if (c.src.snip) {
          body.appendChild(el("p", "where", "The verifier's excerpt:"));
          body.appendChild(el("pre", null, c.src.snip));
        }
      }
    } else if (c.c && c.c.length) {
      body.appendChild(el("h3", "where", "Nearest pages in the sources"));
      c.c.forEach(function (cand) {
        body.appendChild(el("p", "where", where(cand.f, cand.p, cand.b)));
        body.appendChild(highlighted(cand.x, cand.hl).pre);
      });
    } else {
      body.appendChild(el("p", null, "No page of the sources comes near this claim."));
    }
    if (scrollTo) {
      var pre = scrollTo.parentNode;
      pre.scrollTop = Math.max(0, scrollTo.offsetTop - pre.offsetTop - 40);
    }
  }

  function select(i, focus) {
    if (selected >= 0) {
      var old = document.querySelectorAll('#draft mark.c[data-i="' + selected + '"]');
      for (var k = 0; k < old.length; k++) old[k].classList.remove("sel");
    }
    selected = i;
    var now = document.querySelectorAll('#draft mark.c[data-i="' + i + '"]');
    for (var k2 = 0; k2 < now.length; k2++) now[k2].classList.add("sel");
    show(i);
    if (first[i]) {
      first[i].scrollIntoView({ block: "center" });
      if (focus) first[i].focus({ preventScroll: true });
    }
    document.body.setAttribute("data-selected", String(i));
  }

  function visible(i) {
    var c = claims[i];
    if (filter.kind && c.k !== filter.kind) return false;
    if (filter.status === "problem") return c.s !== "supported";
    return !filter.status || c.s === filter.status;
  }
  function step(dir) {
    var pos = selected >= 0 ? order.indexOf(selected) : (dir > 0 ? -1 : order.length);
    for (var k = pos + dir; k >= 0 && k < order.length; k += dir) {
      var i = order[k];
      // Problems, or with a status chosen in the filter, the claims it shows.
      if (visible(i) && (filter.status || claims[i].s !== "supported")) { select(i, true); return; }
    }
  }

  var style = document.createElement("style");
  document.head.appendChild(style);
  function applyFilter() {
    filter.kind = document.getElementById("f-kind").value;
    filter.status = document.getElementById("f-status").value;
    var rules = [];
    var off = "#draft mark.c";
    if (filter.kind) off += ':not([data-k="' + CSS.escape(filter.kind) + '"])';
    var offStatus = "#draft mark.c";
    if (filter.status === "problem") offStatus += '[data-s="supported"]';
    else if (filter.status) offStatus += ':not([data-s="' + CSS.escape(filter.status) + '"])';
    [filter.kind ? off : null, filter.status ? offStatus : null].forEach(function (sel) {
      if (!sel) return;
      rules.push(sel + "{background:none!important;border-bottom:0!important;cursor:auto}");
      rules.push(sel + " > .ic," + sel + " > .sw{display:none}");
    });
    style.textContent = rules.join("\n");
    var items = document.querySelectorAll("#problems li[data-i]");
    for (var k = 0; k < items.length; k++) {
      items[k].hidden = !visible(+items[k].getAttribute("data-i"));
    }
  }

  document.getElementById("draft").addEventListener("click", function (e) {
    var m = e.target.closest && e.target.closest("mark.c[data-i]");
    if (m) select(+m.getAttribute("data-i"), false);
  });
  var nav = document.getElementById("problems");
  nav.addEventListener("click", function (e) {
    var a = e.target.closest && e.target.closest("a[data-i]");
    if (!a) return;
    e.preventDefault();
    select(+a.getAttribute("data-i"), true);
  });
  document.getElementById("next").addEventListener("click", function () { step(1); });
  document.getElementById("prev").addEventListener("click", function () { step(-1); });
  document.getElementById("f-kind").addEventListener("change", applyFilter);
  document.getElementById("f-status").addEventListener("change", applyFilter);
  document.addEventListener("keydown", function (e) {
    var t = e.target.tagName;
    if (t === "INPUT" || t === "SELECT" || t === "TEXTAREA" || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "n" || e.key === "j") { step(1); e.preventDefault(); }
    else if (e.key === "p" || e.key === "k") { step(-1); e.preventDefault(); }
    else if (e.key === "Enter" && e.target.matches && e.target.matches("mark.c[data-i]")) {
      select(+e.target.getAttribute("data-i"), true);
    }
  });
  // A link to a claim (#c12) selects it.
  var m = /^#c(\d+)$/.exec(location.hash);
  if (m && claims[+m[1]]) select(+m[1], true);
  applyFilter();
  window.reviewReady = performance.now();
  document.body.setAttribute("data-ready", "1");
})();
