//! The review page: one self-contained HTML file a supervising attorney opens before signing.
//! The draft as it will be filed, every claim marked where it stands by its status, the
//! problems listed first, and beside the draft the evidence for the claim selected: the
//! supporting page with the matched words highlighted (its scan too, for OCR'd pages), or the
//! reason and the nearest pages when nothing supports it. A print layout lists every problem
//! with its evidence, so the page can be filed with the work product.
//!
//! The page embeds everything (style, script, data as JSON) and needs no server or network.
//! Drafts and evidence are only ever text on it: escaped in HTML, set with `textContent` by
//! the script, and in the JSON block `<` is written `\u003c` so nothing can close the block.
//! It carries lexrun's provenance marker, so the intake guard refuses it as evidence.
//!
//! Statuses are shown as the verifier names them: a status this page has no style for is
//! still marked, with its word and a generic icon.

use lexrun_base::escape;
use lexrun_document as document;
use lexrun_sources as sources;
use lexrun_verify as verify;

mod draft;
mod evidence;
mod index;
mod marks;

pub use index::{index_page, IndexEntry};

use marks::{icon, marker};

use std::fmt::Write;

use serde::Serialize;

use crate::verify::{Evidence, Outcome, SourceFile, Status};

/// What a review page is made from.
pub struct Review<'a> {
    /// What is verified (a draft's file name, or a matter and stage).
    pub title: &'a str,
    pub draft: &'a str,
    pub outcomes: &'a [Outcome],
    pub files: &'a [SourceFile],
    /// The evidence verified against, read again for the pages the page shows.
    pub evidence: &'a Evidence,
    /// Where the verification comes from, as (name, value): run, stage, model, plan hash.
    pub provenance: Vec<(String, String)>,
    /// Render scanned pages as images (with `pdftoppm`).
    pub images: bool,
    /// Each outcome's claim id, for `lexrun decide` (empty when the claims have none).
    pub ids: &'a [String],
}

/// Problems come first, in this order of status, then in draft order.
fn rank(status: Status) -> u8 {
    match status {
        Status::Unsupported => 0,
        Status::Miscited => 1,
        Status::Unrecognized => 5,
        Status::Supported => 9,
    }
}

/// The status of an outcome, as the verifier's JSON report writes it.

#[derive(Serialize)]
struct Data<'a> {
    claims: Vec<ClaimData<'a>>,
    pages: Vec<PageData<'a>>,
    missing: &'a [(String, String)],
}

#[derive(Serialize)]
struct ClaimData<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
    k: &'static str,
    s: &'a str,
    t: &'a str,
    l: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    r: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    src: Option<SrcData<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pg: Option<usize>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    hl: &'a [(usize, usize)],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    c: Vec<CandData<'a>>,
}

#[derive(Serialize)]
struct SrcData<'a> {
    f: &'a str,
    p: u32,
    b: Option<&'a str>,
    snip: &'a str,
}

#[derive(Serialize)]
struct PageData<'a> {
    f: &'a str,
    p: u32,
    b: Option<&'a str>,
    t: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    o: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    img: Option<&'a str>,
}

#[derive(Serialize)]
struct CandData<'a> {
    f: &'a str,
    p: u32,
    b: Option<&'a str>,
    x: &'a str,
    hl: &'a [(usize, usize)],
}

/// JSON that can sit inside a `<script>` element: no `<`, `>` or `&` appears as itself.
fn script_json<T: Serialize>(v: &T) -> String {
    escape::script_json(&serde_json::to_string(v).unwrap_or_else(|_| "{}".into()))
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The review page.
pub fn page(r: &Review) -> String {
    let g = evidence::gather(r.outcomes, r.evidence, r.images);
    let statuses: Vec<Status> = r.outcomes.iter().map(|o| o.status).collect();
    let lines = claim_lines(r);

    let data = page_data(r, &g, &statuses, &lines);

    let marks: Vec<draft::Mark> = r
        .outcomes
        .iter()
        .enumerate()
        .map(|(i, o)| draft::Mark {
            start: o.claim.start,
            end: o.claim.end,
            kind: o.claim.kind.as_str(),
            status: statuses[i],
        })
        .collect();
    let body = draft::render(r.draft, &marks);

    let mut problems: Vec<usize> = (0..r.outcomes.len())
        .filter(|&i| statuses[i] != Status::Supported)
        .collect();
    problems.sort_by_key(|&i| (rank(statuses[i]), r.outcomes[i].claim.start));

    let mut s = String::with_capacity(body.len() + 4096 + r.outcomes.len() * 400);
    let title = format!("Verification of {}", r.title);
    let _ = write!(
        s,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n{}\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"lexrun\">\n<title>{}</title>\n<style>\n{}</style>\n</head>\n<body>\n\
         <a class=\"skip\" href=\"#problems\">Skip to the problems</a>\n<header>\n<h1>{}</h1>\n",
        marker(&r.provenance),
        escape::html(&title),
        include_str!("review.css"),
        escape::html(&title),
    );
    verdict(&mut s, r, &g, &statuses, &problems);
    controls(&mut s, r.outcomes, &statuses);
    s.push_str("</header>\n<main>\n");

    problem_list(&mut s, r, &statuses, &problems, &lines);
    let _ = write!(
        s,
        "<article id=\"draft\" aria-labelledby=\"draft-h\">\n<h2 id=\"draft-h\">Draft</h2>\n{body}</article>\n"
    );
    s.push_str(
        "<aside id=\"evidence\" aria-labelledby=\"evidence-h\">\n<h2 id=\"evidence-h\">Evidence</h2>\n\
         <div id=\"ev-body\" aria-live=\"polite\"><p>Select a claim in the draft or in the list of problems to see its evidence here.</p></div>\n</aside>\n</main>\n",
    );
    print_section(&mut s, r, &statuses, &problems, &lines, &g);
    let _ = write!(
        s,
        "<script type=\"application/json\" id=\"review-data\">{}</script>\n<script>\n{}</script>\n</body>\n</html>\n",
        script_json(&data),
        include_str!("review.js")
    );
    s
}

/// The line of the draft each claim begins on, counted once through the draft.
fn claim_lines(r: &Review) -> Vec<usize> {
    let mut order: Vec<usize> = (0..r.outcomes.len()).collect();
    order.sort_by_key(|&i| r.outcomes[i].claim.start);
    let mut lines = vec![0; r.outcomes.len()];
    let (mut at, mut line) = (0, 1);
    for &i in &order {
        let s = r.outcomes[i].claim.start.min(r.draft.len());
        if s > at {
            line += r.draft.as_bytes()[at..s]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            at = s;
        }
        lines[i] = line;
    }
    lines
}

/// The page's data for its script: every claim with its evidence, and the pages shown.
fn page_data<'a>(
    r: &'a Review,
    g: &'a evidence::Gathered,
    statuses: &[Status],
    lines: &[usize],
) -> Data<'a> {
    let claims: Vec<ClaimData> = r
        .outcomes
        .iter()
        .enumerate()
        .map(|(i, o)| ClaimData {
            id: r.ids.get(i).map(String::as_str),
            k: o.claim.kind.as_str(),
            s: statuses[i].as_str(),
            t: &o.claim.text,
            l: lines[i],
            r: o.reason.as_deref(),
            src: o.source.as_ref().map(|l| SrcData {
                f: &l.file,
                p: l.page,
                b: l.bates.as_deref(),
                snip: &l.snippet,
            }),
            pg: g.shown[i].as_ref().map(|s| s.page),
            hl: g.shown[i]
                .as_ref()
                .map_or(&[][..], |s| s.highlights.as_slice()),
            c: g.candidates[i]
                .iter()
                .map(|c| CandData {
                    f: &c.file,
                    p: c.page,
                    b: c.bates.as_deref(),
                    x: &c.excerpt,
                    hl: &c.highlights,
                })
                .collect(),
        })
        .collect();
    Data {
        claims,
        pages: g
            .pages
            .iter()
            .map(|p| PageData {
                f: &p.file,
                p: p.page,
                b: p.bates.as_deref(),
                t: &p.text,
                o: p.from.as_deref(),
                img: p.image.as_deref(),
            })
            .collect(),
        missing: &g.missing,
    }
}

/// The verdict, the provenance, the legend and counts, and a warning for each source that
/// could not be read or has gone missing.
fn verdict(
    s: &mut String,
    r: &Review,
    g: &evidence::Gathered,
    statuses: &[Status],
    problems: &[usize],
) {
    let unreadable: Vec<&SourceFile> = r.files.iter().filter(|f| f.problem.is_some()).collect();
    let _ = writeln!(
        s,
        "<p class=\"verdict\">{} claims checked, {} problem{}. {}</p>",
        r.outcomes.len(),
        problems.len(),
        if problems.len() == 1 { "" } else { "s" },
        if problems.is_empty() && unreadable.is_empty() {
            "Every claim is supported by the sources."
        } else {
            "<strong>Not ready to sign:</strong> the claims listed under Problems are not supported as written."
        }
    );
    s.push_str("<dl class=\"prov\">");
    for (k, v) in &r.provenance {
        let _ = write!(
            s,
            "<dt>{}</dt><dd>{}</dd>",
            escape::html(k),
            escape::html(v)
        );
    }
    s.push_str("</dl>\n");
    legend(s, r.outcomes, statuses);
    for f in &unreadable {
        let _ = writeln!(
            s,
            "<p class=\"warn\" role=\"alert\"><span aria-hidden=\"true\">⚠</span> Could not read <code>{}</code>: {} — nothing it might support counts as supported.</p>",
            escape::html(&f.path),
            escape::html(f.problem.as_deref().unwrap_or(""))
        );
    }
    for (f, why) in &g.missing {
        let _ = writeln!(
            s,
            "<p class=\"warn missing\" role=\"alert\"><span aria-hidden=\"true\">⚠</span> Source file missing: <code>{}</code> has moved or been deleted since the verification ({}). Claims it supports show the verifier's excerpt only.</p>",
            escape::html(f),
            escape::html(why)
        );
    }
}

/// The problems, each linked to its claim in the draft.
fn problem_list(
    s: &mut String,
    r: &Review,
    statuses: &[Status],
    problems: &[usize],
    lines: &[usize],
) {
    let _ = write!(
        s,
        "<nav id=\"problems\" aria-labelledby=\"problems-h\">\n<h2 id=\"problems-h\">Problems ({})</h2>\n",
        problems.len()
    );
    if problems.is_empty() {
        s.push_str("<p>None: every claim is supported.</p>\n");
    } else {
        s.push_str("<ol>\n");
        for &i in problems {
            let o = &r.outcomes[i];
            let st = statuses[i];
            let id = r.ids.get(i).map_or(String::new(), |id| {
                format!(" <code class=\"cid\">{}</code>", escape::html(id))
            });
            let _ = writeln!(
                s,
                "<li data-i=\"{i}\" data-k=\"{k}\" data-s=\"{ste}\" class=\"s-{ste}\"><a href=\"#c{i}\" data-i=\"{i}\"><span class=\"ic\" aria-hidden=\"true\">{ic}</span> <span class=\"st\">{ste}</span> {k}, line {l}: <q>{t}</q>{id}</a></li>",
                k = o.claim.kind.as_str(),
                ste = st.as_str(),
                ic = icon(st),
                l = lines[i],
                t = escape::html(&one_line(&o.claim.text)),
            );
        }
        s.push_str("</ol>\n");
    }
    s.push_str("</nav>\n");
}

/// Counts by status and by kind, as tables: the legend.
fn legend(s: &mut String, outcomes: &[Outcome], statuses: &[Status]) {
    let mut by_status: Vec<(Status, usize)> = Vec::new();
    for st in [Status::Supported, Status::Unsupported]
        .into_iter()
        .chain(statuses.iter().copied())
    {
        if !by_status.iter().any(|(x, _)| *x == st) {
            by_status.push((st, 0));
        }
    }
    for st in statuses {
        if let Some(e) = by_status.iter_mut().find(|e| e.0 == *st) {
            e.1 += 1;
        }
    }
    by_status.sort_by_key(|(st, _)| rank(*st));
    s.push_str("<div class=\"legend\">\n<table class=\"counts\"><caption>Claims by status</caption>\n<thead><tr><th scope=\"col\">mark</th><th scope=\"col\">status</th><th scope=\"col\">claims</th></tr></thead><tbody>\n");
    for (st, n) in &by_status {
        let _ = writeln!(
            s,
            "<tr><td><mark class=\"c s-{ste}\"><span class=\"ic\" aria-hidden=\"true\">{}</span>claim</mark></td><th scope=\"row\">{ste}</th><td class=\"n\">{n}</td></tr>",
            icon(*st),
            ste = st.as_str()
        );
    }
    s.push_str("</tbody></table>\n");
    let mut kinds: Vec<(&str, usize, usize)> = Vec::new();
    for (o, st) in outcomes.iter().zip(statuses) {
        let k = o.claim.kind.as_str();
        let problem = usize::from(*st != Status::Supported);
        match kinds.iter_mut().find(|(x, _, _)| *x == k) {
            Some(e) => {
                e.1 += 1;
                e.2 += problem;
            }
            None => kinds.push((k, 1, problem)),
        }
    }
    s.push_str("<table class=\"counts\"><caption>Claims by kind</caption>\n<thead><tr><th scope=\"col\">kind</th><th scope=\"col\">claims</th><th scope=\"col\">problems</th></tr></thead><tbody>\n");
    for (k, n, p) in &kinds {
        let _ = writeln!(
            s,
            "<tr><th scope=\"row\">{k}</th><td class=\"n\">{n}</td><td class=\"n\">{p}</td></tr>"
        );
    }
    s.push_str("</tbody></table>\n</div>\n");
}

/// The filter and the problem navigation.
fn controls(s: &mut String, outcomes: &[Outcome], statuses: &[Status]) {
    let mut kinds: Vec<&str> = outcomes.iter().map(|o| o.claim.kind.as_str()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    let mut sts: Vec<Status> = statuses.to_vec();
    sts.sort_by_key(|x| (rank(*x), x.as_str()));
    sts.dedup();
    s.push_str("<form class=\"controls\" id=\"controls\" onsubmit=\"return false\">\n<label for=\"f-kind\">Kind</label> <select id=\"f-kind\"><option value=\"\">all kinds</option>");
    for k in kinds {
        let _ = write!(s, "<option value=\"{k}\">{k}</option>");
    }
    s.push_str("</select>\n<label for=\"f-status\">Status</label> <select id=\"f-status\"><option value=\"\">all statuses</option><option value=\"problem\">every problem</option>");
    for st in sts {
        let _ = write!(s, "<option value=\"{0}\">{0}</option>", st.as_str());
    }
    s.push_str("</select>\n<button type=\"button\" id=\"prev\">◀ Previous problem</button> <button type=\"button\" id=\"next\">Next problem ▶</button>\n<span class=\"hint\">Keys: <kbd>n</kbd>/<kbd>j</kbd> next problem, <kbd>p</kbd>/<kbd>k</kbd> previous (with a status chosen, the next claim of that status).</span>\n</form>\n");
}

/// Every problem with its evidence, for print.
fn print_section(
    s: &mut String,
    r: &Review,
    statuses: &[Status],
    problems: &[usize],
    lines: &[usize],
    g: &evidence::Gathered,
) {
    let _ = write!(
        s,
        "<section id=\"print-problems\" aria-labelledby=\"print-h\">\n<h2 id=\"print-h\">Every problem, with its evidence ({})</h2>\n",
        problems.len()
    );
    if problems.is_empty() {
        s.push_str("<p>None: every claim is supported.</p>\n</section>\n");
        return;
    }
    s.push_str("<table class=\"plist\"><thead><tr><th scope=\"col\">#</th><th scope=\"col\">line</th><th scope=\"col\">status</th><th scope=\"col\">kind</th><th scope=\"col\">claim</th><th scope=\"col\">why, and the nearest evidence</th></tr></thead><tbody>\n");
    for (n, &i) in problems.iter().enumerate() {
        let o = &r.outcomes[i];
        let st = statuses[i];
        let _ = write!(
            s,
            "<tr data-i=\"{i}\"><td>{}</td><td>{}</td><td><span aria-hidden=\"true\">{}</span> {}</td><td>{}</td><td>{}</td><td>",
            n + 1,
            lines[i],
            icon(st),
            st.as_str(),
            o.claim.kind.as_str(),
            escape::html(&one_line(&o.claim.text)),
        );
        if let Some(why) = &o.reason {
            let _ = write!(s, "<p>{}</p>", escape::html(why));
        }
        if let Some(l) = &o.source {
            let _ = write!(
                s,
                "<p>Cited source: {}</p>",
                page_html(&l.file, l.page, l.bates.as_deref())
            );
        }
        for c in &g.candidates[i] {
            let _ = write!(
                s,
                "<p class=\"cand\">Nearest: {}: <q>{}</q></p>",
                page_html(&c.file, c.page, c.bates.as_deref()),
                marked(&c.excerpt, &c.spans)
            );
        }
        if g.candidates[i].is_empty() && o.source.is_none() {
            s.push_str("<p class=\"cand\">No page of the sources comes near.</p>");
        }
        s.push_str("</td></tr>\n");
    }
    s.push_str("</tbody></table>\n</section>\n");
}

/// A page of a source, for the page: `file p. 3 (SMITH000003)`, escaped.
fn page_html(file: &str, page: impl std::fmt::Display, bates: Option<&str>) -> String {
    format!(
        "{} p. {page}{}",
        escape::html(file),
        bates.map_or(String::new(), |b| format!(" ({})", escape::html(b)))
    )
}

/// Text with byte ranges wrapped in `<mark>`, escaped.
fn marked(text: &str, spans: &[(usize, usize)]) -> String {
    let mut out = String::new();
    let mut at = 0;
    for &(a, b) in spans {
        if a < at || b > text.len() {
            continue;
        }
        out.push_str(&escape::html(&text[at..a]));
        out.push_str("<mark>");
        out.push_str(&escape::html(&text[a..b]));
        out.push_str("</mark>");
        at = b;
    }
    out.push_str(&escape::html(&text[at..]));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify;

    fn review_of(draft: &str, pages: &[&str]) -> String {
        let mut ev = Evidence::new(vec!["DOC".into()]);
        ev.add_pages(
            "lease.txt".into(),
            pages.iter().map(|p| p.to_string()).collect(),
        );
        let v = verify::verify(draft, &ev);
        page(&Review {
            title: "draft.md",
            draft,
            outcomes: &v.outcomes,
            files: &v.files,
            evidence: &ev,
            provenance: vec![("run".into(), "run-1".into())],
            images: false,
            ids: &[],
        })
    }

    #[test]
    fn the_data_block_cannot_be_closed_by_evidence() {
        let html = review_of(
            "The lease of January 5, 2024 says \"</script><script>alert(1)</script> ok\".",
            &["Lease dated January 5, 2024. </script><script>alert(1)</script> ok\n\nDOC000001"],
        );
        assert_eq!(html.matches("<script").count(), 2, "{html}");
        assert_eq!(html.matches("</script>").count(), 2);
        assert!(html.contains("lexrun:provenance"));
    }

    #[test]
    fn each_problem_shows_the_id_a_decision_names_it_by() {
        let draft = "Paid $999.00 on May 1, 2024.";
        let mut ev = Evidence::new(vec!["DOC".into()]);
        ev.add_pages("lease.txt".into(), vec!["Nothing.\n\nDOC000001".into()]);
        let mut v = verify::verify(draft, &ev);
        verify::decisions::apply(&mut v, draft, &ev, "smith", &[]);
        assert_eq!(v.ids.len(), 2);
        let html = page(&Review {
            title: "draft.md",
            draft,
            outcomes: &v.outcomes,
            files: &v.files,
            evidence: &ev,
            provenance: vec![],
            images: false,
            ids: &v.ids,
        });
        let nav = &html[html.find("<nav id=\"problems\"").unwrap()..html.find("</nav>").unwrap()];
        for id in &v.ids {
            assert!(
                nav.contains(&format!("<code class=\"cid\">{id}</code>")),
                "{nav}"
            );
        }
    }

    #[test]
    fn problems_are_listed_first_and_the_page_is_marked() {
        let html = review_of(
            "Paid $100.00 on January 5, 2024 and $999.00 on May 1, 2024.",
            &["Paid $100.00 on January 5, 2024.\n\nDOC000001"],
        );
        let nav = &html[html.find("<nav id=\"problems\"").unwrap()..html.find("</nav>").unwrap()];
        assert_eq!(nav.matches("<li").count(), 2, "{nav}");
        assert!(nav.contains("$999.00") && nav.contains("May 1, 2024"));
        assert_eq!(html.matches("class=\"c s-supported\" data-i").count(), 2);
        assert!(html.contains("\"hl\":[[6,12]]"), "{html}");
    }
}
