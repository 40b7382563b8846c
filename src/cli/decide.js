// Decisions on the served review page: confirm a flagged claim by a page (picked, and shown
// before it is named), strike it, or waive it with a reason; undo a decision. Keys: n/p move
// between problems (the page's own), c confirm, s strike, w waive, u undo the selected claim's
// decision, Enter records what the focused field belongs to. Text is only ever set as text.
(function () {
  "use strict";
  var state = JSON.parse(document.getElementById("decide-data").textContent);
  var review = JSON.parse(document.getElementById("review-data").textContent);
  var box = document.getElementById("decide-body");
  var current = -1;
  var shown = 0;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }
  function msg(text, ok) {
    var m = document.getElementById("decide-msg");
    m.className = ok ? "ok" : "msg";
    m.textContent = text;
  }
  function post(body) {
    msg("Recording…", true);
    return fetch("/decide", {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-Lexrun-Review": "1" },
      body: JSON.stringify(body)
    }).then(function (r) {
      return r.json().then(function (j) {
        if (!r.ok) throw new Error(j.error || ("the server answered " + r.status));
        return j;
      });
    }).then(function (j) {
      msg(j.recorded, true);
      sessionStorage.setItem("lexrun-decided", j.recorded);
      location.reload();
    }, function (e) {
      msg("Not recorded: " + e.message, false);
      document.body.setAttribute("data-decide-error", e.message);
    });
  }
  function decisionOf(id) {
    for (var k = 0; k < state.decisions.length; k++) {
      if (state.decisions[k].id === id) return state.decisions[k];
    }
    return null;
  }
  function showPage() {
    var f = document.getElementById("pick-file").value;
    var p = document.getElementById("pick-page").value;
    var out = document.getElementById("pick-text");
    out.textContent = "…";
    var asked = ++shown;
    fetch("/page?f=" + encodeURIComponent(f) + "&p=" + encodeURIComponent(p), { credentials: "same-origin" })
      .then(function (r) { return r.json(); })
      .then(function (j) {
        // Only the page asked for last is shown.
        if (asked === shown) out.textContent = j.text !== undefined ? j.text : (j.error || "");
      });
  }
  function render() {
    box.textContent = "";
    box.appendChild(el("p", null, "Reviewer: " + state.reviewer + " · matter " + state.matter));
    var m = el("p", "msg");
    m.id = "decide-msg";
    m.setAttribute("role", "alert");
    box.appendChild(m);
    var c = state.claims[current];
    if (!c) {
      box.appendChild(el("p", null, "Select a flagged claim (n, p) to decide on it."));
    } else {
      box.appendChild(el("h3", null, c.id + " · " + c.kind + " · " + c.status));
      box.appendChild(el("p", "claim", c.text));
      var d = decisionOf(c.id);
      if (d) box.appendChild(el("p", null, "Decision: " + d.decision + " by " + d.reviewer + " on " + d.when + (d.lapsed ? " — lapsed: " + d.lapsed : "")));
      if (c.status !== "supported" || d) {
        var f = el("select");
        f.id = "pick-file";
        state.sources.forEach(function (s) {
          var o = el("option", null, s.name + " (" + s.pages + " pages)");
          o.value = s.name;
          f.appendChild(o);
        });
        var lf = el("label", null, "Page that supports it");
        lf.appendChild(f);
        box.appendChild(lf);
        var row = el("div", "row");
        var p = el("input");
        p.type = "number"; p.min = "1"; p.value = "1"; p.id = "pick-page";
        p.setAttribute("aria-label", "page number");
        row.appendChild(p);
        var show = el("button", null, "Show page");
        show.type = "button"; show.id = "pick-show";
        show.onclick = showPage;
        row.appendChild(show);
        box.appendChild(row);
        var pre = el("pre");
        pre.id = "pick-text";
        box.appendChild(pre);
        // The page the verifier found nearest (or the one it names) is offered first.
        var near = review.claims[current] || {};
        var at = near.src || (near.c && near.c[0]);
        if (at) {
          for (var k = 0; k < f.options.length; k++) {
            if (f.options[k].value === at.f) { f.value = at.f; p.value = String(at.p); showPage(); break; }
          }
        }
        var ln = el("label", null, "Note");
        var note = el("textarea"); note.id = "decide-note"; note.rows = 2;
        ln.appendChild(note); box.appendChild(ln);
        var lr = el("label", null, "Reason (to waive)");
        var reason = el("input"); reason.type = "text"; reason.id = "decide-reason";
        lr.appendChild(reason); box.appendChild(lr);
        var b = el("div", "row");
        [["confirm", "Confirm (c)"], ["strike", "Strike (s)"], ["waive", "Waive (w)"], ["undo", "Undo (u)"]].forEach(function (x) {
          var bt = el("button", null, x[1]);
          bt.type = "button"; bt.id = "do-" + x[0];
          bt.onclick = function () { act(x[0]); };
          b.appendChild(bt);
        });
        box.appendChild(b);
      } else {
        box.appendChild(el("p", null, "The verifier supports this claim: nothing to decide."));
      }
    }
    if (state.decisions.length) {
      box.appendChild(el("h3", null, "Decisions on this draft"));
      var ul = el("ul");
      state.decisions.forEach(function (d) {
        var li = el("li", null, d.id + " “" + d.text + "”: " + d.decision + (d.page ? " by " + d.page.file + " p. " + d.page.page : "") + " — " + d.reviewer + ", " + d.when + (d.lapsed ? " (lapsed: " + d.lapsed + ")" : "") + " ");
        var undo = el("button", "undo", "Undo");
        undo.type = "button";
        undo.setAttribute("data-id", d.id);
        undo.setAttribute("aria-label", "Undo the decision on " + d.id);
        undo.onclick = function () { post({ claim: d.id, decision: "withdrawn" }); };
        li.appendChild(undo);
        ul.appendChild(li);
      });
      box.appendChild(ul);
    }
    var done = sessionStorage.getItem("lexrun-decided");
    if (done) { msg(done, true); sessionStorage.removeItem("lexrun-decided"); }
  }
  function act(what) {
    var c = state.claims[current];
    if (!c) { msg("Select a claim first (n).", false); return; }
    var note = document.getElementById("decide-note");
    if (what === "confirm") {
      var f = document.getElementById("pick-file").value, p = document.getElementById("pick-page").value;
      post({ claim: c.id, decision: "confirmed", page: f + ":" + p, note: note ? note.value : "" });
    } else if (what === "strike") {
      post({ claim: c.id, decision: "struck", note: note ? note.value : "" });
    } else if (what === "waive") {
      var r = document.getElementById("decide-reason");
      if (!r.value.trim()) { msg("A waiver needs a reason: type it, then press Enter.", false); r.focus(); return; }
      post({ claim: c.id, decision: "waived", reason: r.value, note: note ? note.value : "" });
    } else if (what === "undo") {
      post({ claim: c.id, decision: "withdrawn" });
    }
  }
  function follow() {
    var s = document.body.getAttribute("data-selected");
    var i = s === null ? -1 : +s;
    if (i !== current) { current = i; render(); }
  }
  new MutationObserver(follow).observe(document.body, { attributes: true, attributeFilter: ["data-selected"] });
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var t = e.target, typing = t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT");
    if (typing) {
      if (e.key === "Enter" && t.tagName !== "TEXTAREA") {
        e.preventDefault();
        act(t.id === "decide-reason" ? "waive" : t.id === "pick-page" || t.id === "pick-file" ? "confirm" : "");
      } else if (e.key === "Escape") {
        t.blur();
      }
      return;
    }
    if (e.key === "c") { e.preventDefault(); var p = document.getElementById("pick-page"); if (p) { p.focus(); p.select(); } }
    else if (e.key === "s") { e.preventDefault(); act("strike"); }
    else if (e.key === "w") { e.preventDefault(); var r = document.getElementById("decide-reason"); if (r) r.focus(); }
    else if (e.key === "u") { e.preventDefault(); act("undo"); }
  });
  follow();
  render();
  document.body.setAttribute("data-decide-ready", "1");
})();
