//! A Word document (OOXML) written from Markdown: caption block, title, headings, numbered
//! paragraphs with hanging indents, emphasis, block quotes, footnotes, page numbers in the
//! footer, the firm's font, and lexrun's provenance in the document's custom properties.
//! The parts are written by hand; they are few and their schema is stable.

use std::io::Write;
use std::path::Path;

use zip::write::SimpleFileOptions;

use super::markdown::{self, Block, Inline};
use crate::escape;

/// The matter's record, from its `matter.json`: the court caption, and what a letter or a
/// memo is addressed and signed with.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(default)]
pub struct Caption {
    pub court: String,
    pub case_number: String,
    pub plaintiff: String,
    pub defendant: String,
    pub affiant: String,
    /// The client the firm acts for.
    pub client: String,
    /// The letterhead: the firm's name, and its address and contacts (one per line).
    pub firm: String,
    pub firm_address: String,
    /// Who a letter is sent to (name, then address lines), or a memo written for.
    pub addressee: String,
    /// The greeting (default: `Dear` and the addressee's first line).
    pub salutation: String,
    /// The lawyer who signs a letter or writes a memo.
    pub attorney: String,
    /// The `Re:` line (default: the case, `PLAINTIFF v. DEFENDANT`, else the title).
    pub re: String,
    /// The document's date as written on it (default: the day it is laid out).
    pub date: String,
}

/// How a document is laid out around its body.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// A court filing: caption, title, body (an affidavit's jurat after it).
    #[default]
    Pleading,
    /// Letterhead, date, addressee, re: line, salutation, body, signature.
    Letter,
    /// MEMORANDUM, its To / From / Date / Re block, a rule, body.
    Memo,
}

impl Layout {
    pub fn parse(name: &str) -> Option<Layout> {
        match name {
            "pleading" => Some(Layout::Pleading),
            "letter" => Some(Layout::Letter),
            "memo" => Some(Layout::Memo),
            _ => None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Style {
    pub font: String,
    pub size_pt: f32,
    /// 1.0 single, 2.0 double.
    pub line_spacing: f32,
}

impl Default for Style {
    fn default() -> Self {
        Style {
            font: "Times New Roman".into(),
            size_pt: 12.0,
            line_spacing: 2.0,
        }
    }
}

/// A table at the end of the document (the verification appendix).
#[derive(Clone, Debug)]
pub struct Table {
    pub title: String,
    pub note: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// A document that must not be filed or signed as it stands (a draft its verification
/// blocked): `lines` in a red box above everything else, and `mark` beside the page number of
/// every page, so that no page of it can be mistaken for a filing copy.
#[derive(Clone, Debug)]
pub struct Notice {
    /// Short, on every page: `BLOCKED DRAFT — NOT FOR FILING`.
    pub mark: String,
    /// The box at the top: the first line in capitals and bold, the rest as written.
    pub lines: Vec<String>,
}

#[derive(Clone, Debug, Default)]
pub struct Document {
    pub title: String,
    pub body: String,
    pub caption: Option<Caption>,
    /// Markdown after the body: a signature block and jurat.
    pub closing: Option<String>,
    pub appendix: Option<Table>,
    /// A second table after the appendix: the claims a reviewer confirmed by hand, apart from
    /// those the verifier proved.
    pub reviewed: Option<Table>,
    /// Set on a draft that must not be filed: see [`Notice`].
    pub notice: Option<Notice>,
    pub style: Style,
    pub layout: Layout,
    /// Custom document properties (name, value): the run's provenance.
    pub properties: Vec<(String, String)>,
}

fn run(text: &str, bold: bool, italic: bool) -> String {
    styled_run(text, bold, italic, "")
}

/// A run with more run properties (`extra`, e.g. a colour) after bold and italic.
fn styled_run(text: &str, bold: bool, italic: bool, extra: &str) -> String {
    let mut rpr = String::new();
    if bold {
        rpr.push_str("<w:b/>");
    }
    if italic {
        rpr.push_str("<w:i/>");
    }
    rpr.push_str(extra);
    let rpr = if rpr.is_empty() {
        String::new()
    } else {
        format!("<w:rPr>{rpr}</w:rPr>")
    };
    format!(
        "<w:r>{rpr}<w:t xml:space=\"preserve\">{}</w:t></w:r>",
        escape::xml(text)
    )
}

fn runs(inl: &[Inline], bold: bool, italic: bool, out: &mut String) {
    for x in inl {
        match x {
            Inline::Text(t) => out.push_str(&run(t, bold, italic)),
            Inline::Bold(k) => runs(k, true, italic, out),
            Inline::Italic(k) => runs(k, bold, true, out),
            Inline::Note(n) => out.push_str(&format!(
                "<w:r><w:rPr><w:rStyle w:val=\"FootnoteReference\"/></w:rPr><w:footnoteReference w:id=\"{n}\"/></w:r>"
            )),
        }
    }
}

fn para(style: Option<&str>, ppr: &str, content: &str) -> String {
    let st = style
        .map(|s| format!("<w:pStyle w:val=\"{s}\"/>"))
        .unwrap_or_default();
    format!("<w:p><w:pPr>{st}{ppr}</w:pPr>{content}</w:p>")
}

fn blocks(bs: &[Block], out: &mut String) {
    for b in bs {
        let mut content = String::new();
        match b {
            Block::Heading(level, inl) => {
                runs(inl, false, false, &mut content);
                out.push_str(&para(Some(&format!("Heading{}", (*level).min(3))), "", &content));
            }
            Block::Numbered(n, inl) => {
                content.push_str(&run(&format!("{n}."), false, false));
                content.push_str("<w:r><w:tab/></w:r>");
                runs(inl, false, false, &mut content);
                out.push_str(&para(None, "<w:ind w:left=\"720\" w:hanging=\"720\"/>", &content));
            }
            Block::Bullet(inl) => {
                content.push_str(&run("•", false, false));
                content.push_str("<w:r><w:tab/></w:r>");
                runs(inl, false, false, &mut content);
                out.push_str(&para(None, "<w:ind w:left=\"720\" w:hanging=\"360\"/>", &content));
            }
            Block::Quote(inl) => {
                runs(inl, false, false, &mut content);
                out.push_str(&para(Some("Quote"), "", &content));
            }
            Block::Para(inl) => {
                runs(inl, false, false, &mut content);
                out.push_str(&para(None, "", &content));
            }
            Block::Rule => out.push_str(&para(
                None,
                "<w:pBdr><w:bottom w:val=\"single\" w:sz=\"6\" w:space=\"1\" w:color=\"auto\"/></w:pBdr>",
                "",
            )),
        }
    }
}

fn cell(width: u32, content: &str) -> String {
    format!("<w:tc><w:tcPr><w:tcW w:w=\"{width}\" w:type=\"dxa\"/></w:tcPr>{content}</w:tc>")
}

fn caption_xml(c: &Caption, title: &str) -> String {
    let mut s = String::new();
    if !c.court.is_empty() {
        s.push_str(&para(
            Some("Court"),
            "",
            &run(&c.court.to_uppercase(), true, false),
        ));
    }
    if !c.plaintiff.is_empty() || !c.defendant.is_empty() || !c.case_number.is_empty() {
        let mut left = String::new();
        for (name, role) in [(&c.plaintiff, "Plaintiff,"), (&c.defendant, "Defendant.")] {
            if name.is_empty() {
                continue;
            }
            left.push_str(&para(
                Some("Caption"),
                "",
                &run(&format!("{},", name.to_uppercase()), false, false),
            ));
            left.push_str(&para(
                Some("Caption"),
                "<w:ind w:left=\"1440\"/>",
                &run(role, false, false),
            ));
            if role == "Plaintiff," {
                left.push_str(&para(
                    Some("Caption"),
                    "<w:ind w:left=\"720\"/>",
                    &run("v.", false, false),
                ));
            }
        }
        if left.is_empty() {
            left = para(Some("Caption"), "", "");
        }
        let right = para(
            Some("Caption"),
            "",
            &run(
                &if c.case_number.is_empty() {
                    String::new()
                } else {
                    format!("Case No. {}", c.case_number)
                },
                false,
                false,
            ),
        );
        s.push_str(
            "<w:tbl><w:tblPr><w:tblW w:w=\"9360\" w:type=\"dxa\"/><w:tblBorders><w:insideV w:val=\"single\" w:sz=\"4\" w:space=\"0\" w:color=\"auto\"/></w:tblBorders><w:tblLayout w:type=\"fixed\"/></w:tblPr><w:tblGrid><w:gridCol w:w=\"5400\"/><w:gridCol w:w=\"3960\"/></w:tblGrid><w:tr>",
        );
        s.push_str(&cell(5400, &left));
        s.push_str(&cell(3960, &right));
        s.push_str("</w:tr></w:tbl>");
    }
    if !title.is_empty() {
        s.push_str(&para(
            Some("Title"),
            "",
            &run(&title.to_uppercase(), true, false),
        ));
    }
    s
}

/// Today's date (UTC), as a letter is dated: `December 4, 2026`.
pub fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    let (year, month, day) = crate::calendar::civil_from_days(days);
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    format!("{} {day}, {year}", MONTHS[(month - 1) as usize])
}

/// Single-spaced lines: a record value's lines, each its own paragraph.
fn lines_xml(text: &str, style: &str, ppr: &str, bold: bool) -> String {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| para(Some(style), ppr, &run(l, bold, false)))
        .collect()
}

/// The case a letter or memo concerns, when the matter names it.
fn re_line(c: &Caption, title: &str) -> String {
    if !c.re.trim().is_empty() {
        return c.re.trim().to_string();
    }
    let mut case = match (c.plaintiff.trim(), c.defendant.trim()) {
        ("", "") => String::new(),
        (p, "") | ("", p) => p.to_string(),
        (p, d) => format!("{p} v. {d}"),
    };
    if !c.case_number.trim().is_empty() {
        if !case.is_empty() {
            case.push_str(", ");
        }
        case.push_str(&format!("Case No. {}", c.case_number.trim()));
    }
    if case.is_empty() {
        title.to_string()
    } else {
        case
    }
}

fn date_of(c: &Caption) -> String {
    match c.date.trim() {
        "" => today(),
        d => d.to_string(),
    }
}

const BLANK: &str = "<w:p><w:pPr><w:pStyle w:val=\"Caption\"/></w:pPr></w:p>";
const RULE: &str =
    "<w:pBdr><w:bottom w:val=\"single\" w:sz=\"8\" w:space=\"4\" w:color=\"auto\"/></w:pBdr>";

/// A letter's first page above its body: letterhead, date, addressee, re: line, salutation.
fn letter_head_xml(c: &Caption, title: &str) -> String {
    let mut s = String::new();
    let center = "<w:jc w:val=\"center\"/>";
    if !c.firm.trim().is_empty() {
        s.push_str(&para(
            Some("Letterhead"),
            center,
            &run(&c.firm.trim().to_uppercase(), true, false),
        ));
    }
    let address: Vec<&str> = c
        .firm_address
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    for (i, l) in address.iter().enumerate() {
        let ppr = if i + 1 == address.len() {
            format!("{center}{RULE}")
        } else {
            center.to_string()
        };
        s.push_str(&para(Some("Compact"), &ppr, &run(l, false, false)));
    }
    if address.is_empty() && !c.firm.trim().is_empty() {
        s.push_str(&para(Some("Compact"), RULE, ""));
    }
    s.push_str(BLANK);
    s.push_str(BLANK);
    s.push_str(&para(Some("Caption"), "", &run(&date_of(c), false, false)));
    s.push_str(BLANK);
    s.push_str(&lines_xml(&c.addressee, "Caption", "", false));
    s.push_str(BLANK);
    let re = re_line(c, title);
    s.push_str(&para(
        Some("Caption"),
        "<w:ind w:left=\"720\" w:hanging=\"720\"/>",
        &format!(
            "{}<w:r><w:tab/></w:r>{}",
            run("Re:", true, false),
            run(&re, true, false)
        ),
    ));
    s.push_str(BLANK);
    let salutation = match (
        c.salutation.trim(),
        c.addressee.lines().map(str::trim).find(|l| !l.is_empty()),
    ) {
        ("", Some(first)) => format!("Dear {first}:"),
        ("", None) => "Dear Sir or Madam:".to_string(),
        (s, _) => s.to_string(),
    };
    s.push_str(&para(None, "", &run(&salutation, false, false)));
    s
}

/// A letter's signature: the closing, room to sign, the lawyer and the firm.
fn letter_signature_xml(c: &Caption) -> String {
    let keep = "<w:keepNext/><w:keepLines/>";
    let mut s = para(Some("Caption"), keep, "");
    s.push_str(&para(
        Some("Caption"),
        keep,
        &run("Very truly yours,", false, false),
    ));
    for _ in 0..3 {
        s.push_str(&para(Some("Caption"), keep, ""));
    }
    let signer = [c.attorney.trim(), c.firm.trim()];
    let signer: Vec<&str> = signer.into_iter().filter(|l| !l.is_empty()).collect();
    if signer.is_empty() {
        s.push_str(&para(
            Some("Caption"),
            "",
            &run("______________________", false, false),
        ));
    }
    for l in signer {
        s.push_str(&para(Some("Caption"), "", &run(l, false, false)));
    }
    s
}

/// A memo's heading: MEMORANDUM, then To / From / Date / Re, then a rule.
fn memo_head_xml(c: &Caption, title: &str) -> String {
    let mut s = para(Some("Title"), "", &run("MEMORANDUM", true, false));
    let first = |t: &str| {
        t.lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or_default()
            .to_string()
    };
    let to = match first(&c.addressee) {
        t if t.is_empty() => first(&c.client),
        t => t,
    };
    let from = [c.attorney.trim(), c.firm.trim()]
        .into_iter()
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(", ");
    let rows = [
        ("TO:", to),
        ("FROM:", from),
        ("DATE:", date_of(c)),
        ("RE:", re_line(c, title)),
    ];
    let n = rows.len();
    for (i, (label, value)) in rows.into_iter().enumerate() {
        let ppr = format!(
            "<w:tabs><w:tab w:val=\"left\" w:pos=\"1440\"/></w:tabs><w:ind w:left=\"1440\" w:hanging=\"1440\"/><w:spacing w:after=\"120\" w:line=\"240\" w:lineRule=\"auto\"/>{}",
            if i + 1 == n { RULE } else { "" }
        );
        s.push_str(&para(
            Some("Caption"),
            &ppr,
            &format!(
                "{}<w:r><w:tab/></w:r>{}",
                run(label, true, false),
                run(&value, false, false)
            ),
        ));
    }
    s.push_str(BLANK);
    s
}

/// Dark red, for a blocked draft's notice and its page mark.
const NOTICE_COLOR: &str = "<w:color w:val=\"C00000\"/>";

/// The notice's box: every line inside one border, the first in bold capitals.
fn notice_xml(n: &Notice) -> String {
    let border = "<w:pBdr><w:top w:val=\"single\" w:sz=\"18\" w:space=\"4\" w:color=\"C00000\"/><w:left w:val=\"single\" w:sz=\"18\" w:space=\"4\" w:color=\"C00000\"/><w:bottom w:val=\"single\" w:sz=\"18\" w:space=\"4\" w:color=\"C00000\"/><w:right w:val=\"single\" w:sz=\"18\" w:space=\"4\" w:color=\"C00000\"/></w:pBdr>";
    let mut s = String::new();
    for (i, line) in n.lines.iter().enumerate() {
        let (text, bold, jc) = if i == 0 {
            (line.to_uppercase(), true, "<w:jc w:val=\"center\"/>")
        } else {
            (line.clone(), false, "")
        };
        s.push_str(&para(
            Some("Compact"),
            &format!("{border}{jc}<w:spacing w:after=\"60\"/>"),
            &styled_run(&text, bold, false, NOTICE_COLOR),
        ));
    }
    s.push_str(&para(None, "", ""));
    s
}

fn table_xml(t: &Table) -> String {
    let mut s = para(None, "<w:pageBreakBefore/>", "");
    s.push_str(&para(Some("Heading1"), "", &run(&t.title, false, false)));
    if !t.note.is_empty() {
        s.push_str(&para(Some("Compact"), "", &run(&t.note, false, false)));
    }
    // An appendix that only says something (a document nothing verified) has no table.
    if t.header.is_empty() {
        return s;
    }
    let cols = t.header.len().max(1) as u32;
    let w = 9360 / cols;
    s.push_str("<w:tbl><w:tblPr><w:tblW w:w=\"9360\" w:type=\"dxa\"/><w:tblBorders>");
    for side in ["top", "left", "bottom", "right", "insideH", "insideV"] {
        s.push_str(&format!(
            "<w:{side} w:val=\"single\" w:sz=\"4\" w:space=\"0\" w:color=\"auto\"/>"
        ));
    }
    s.push_str("</w:tblBorders></w:tblPr><w:tblGrid>");
    for _ in 0..cols {
        s.push_str(&format!("<w:gridCol w:w=\"{w}\"/>"));
    }
    s.push_str("</w:tblGrid>");
    let row = |cells: &[String], bold: bool| {
        let mut r = String::from("<w:tr>");
        for c in cells {
            r.push_str(&cell(w, &para(Some("Compact"), "", &run(c, bold, false))));
        }
        r.push_str("</w:tr>");
        r
    };
    s.push_str(&row(&t.header, true));
    for r in &t.rows {
        s.push_str(&row(r, false));
    }
    s.push_str("</w:tbl>");
    s
}

const W_NS: &str = "xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\" xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\"";

/// The `word/document.xml` part (exposed for tests).
pub fn document_xml(d: &Document) -> String {
    let md = markdown::parse(&d.body);
    let mut body = String::new();
    if let Some(n) = &d.notice {
        body.push_str(&notice_xml(n));
    }
    let record = d.caption.clone().unwrap_or_default();
    match (d.layout, &d.caption) {
        (Layout::Letter, _) => body.push_str(&letter_head_xml(&record, &d.title)),
        (Layout::Memo, _) => body.push_str(&memo_head_xml(&record, &d.title)),
        (Layout::Pleading, Some(c)) => body.push_str(&caption_xml(c, &d.title)),
        (Layout::Pleading, None) if !d.title.is_empty() => body.push_str(&para(
            Some("Title"),
            "",
            &run(&d.title.to_uppercase(), true, false),
        )),
        (Layout::Pleading, None) => {}
    }
    blocks(&md.blocks, &mut body);
    if d.layout == Layout::Letter {
        body.push_str(&letter_signature_xml(&record));
    }
    if let Some(closing) = &d.closing {
        body.push_str(&para(None, "<w:keepNext/>", ""));
        let c = markdown::parse(closing);
        let mut s = String::new();
        blocks(&c.blocks, &mut s);
        // The signature block and jurat stay together on one page.
        body.push_str(&s.replace(
            "<w:pPr>",
            "<w:pPr><w:keepNext/><w:spacing w:before=\"240\" w:line=\"240\" w:lineRule=\"auto\"/>",
        ));
    }
    for t in d.appendix.iter().chain(&d.reviewed) {
        body.push_str(&table_xml(t));
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<w:document {W_NS}><w:body>{body}<w:sectPr><w:footerReference w:type=\"default\" r:id=\"rId3\"/><w:pgSz w:w=\"12240\" w:h=\"15840\"/><w:pgMar w:top=\"1440\" w:right=\"1440\" w:bottom=\"1440\" w:left=\"1440\" w:header=\"720\" w:footer=\"720\" w:gutter=\"0\"/></w:sectPr></w:body></w:document>"
    )
}

fn footnotes_xml(d: &Document) -> String {
    let md = markdown::parse(&d.body);
    let mut s = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<w:footnotes {W_NS}><w:footnote w:type=\"separator\" w:id=\"-1\"><w:p><w:r><w:separator/></w:r></w:p></w:footnote><w:footnote w:type=\"continuationSeparator\" w:id=\"0\"><w:p><w:r><w:continuationSeparator/></w:r></w:p></w:footnote>"
    );
    for (i, note) in md.notes.iter().enumerate() {
        let mut content = String::from(
            "<w:r><w:rPr><w:rStyle w:val=\"FootnoteReference\"/></w:rPr><w:footnoteRef/></w:r><w:r><w:t xml:space=\"preserve\"> </w:t></w:r>",
        );
        runs(note, false, false, &mut content);
        s.push_str(&format!(
            "<w:footnote w:id=\"{}\">{}</w:footnote>",
            i + 1,
            para(Some("FootnoteText"), "", &content)
        ));
    }
    s.push_str("</w:footnotes>");
    s
}

fn styles_xml(st: &Style, layout: Layout) -> String {
    let font = escape::xml(&st.font);
    let size = (st.size_pt * 2.0).round() as u32;
    // Letters and memos are single-spaced, a line between paragraphs.
    let (line, after) = match layout {
        Layout::Pleading => ((st.line_spacing * 240.0).round() as u32, 0),
        Layout::Letter | Layout::Memo => (240, 240),
    };
    let rfonts = format!(
        "<w:rFonts w:ascii=\"{font}\" w:hAnsi=\"{font}\" w:eastAsia=\"{font}\" w:cs=\"{font}\"/>"
    );
    let style = |id: &str, name: &str, ppr: &str, rpr: &str| {
        format!(
            "<w:style w:type=\"paragraph\" w:styleId=\"{id}\"><w:name w:val=\"{name}\"/><w:basedOn w:val=\"Normal\"/><w:qFormat/><w:pPr>{ppr}</w:pPr><w:rPr>{rpr}</w:rPr></w:style>"
        )
    };
    let single = "<w:spacing w:before=\"0\" w:after=\"0\" w:line=\"240\" w:lineRule=\"auto\"/>";
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<w:styles {W_NS}><w:docDefaults><w:rPrDefault><w:rPr>{rfonts}<w:sz w:val=\"{size}\"/><w:szCs w:val=\"{size}\"/><w:lang w:val=\"en-US\"/></w:rPr></w:rPrDefault><w:pPrDefault><w:pPr><w:spacing w:after=\"{after}\" w:line=\"{line}\" w:lineRule=\"auto\"/></w:pPr></w:pPrDefault></w:docDefaults><w:style w:type=\"paragraph\" w:default=\"1\" w:styleId=\"Normal\"><w:name w:val=\"Normal\"/><w:qFormat/></w:style>{}{}{}{}{}{}{}{}{}{}<w:style w:type=\"character\" w:styleId=\"FootnoteReference\"><w:name w:val=\"footnote reference\"/><w:rPr><w:vertAlign w:val=\"superscript\"/></w:rPr></w:style></w:styles>",
        style("Title", "Title", "<w:jc w:val=\"center\"/><w:spacing w:before=\"240\" w:after=\"240\" w:line=\"240\" w:lineRule=\"auto\"/>", "<w:b/>"),
        style("Court", "Court", "<w:jc w:val=\"center\"/><w:spacing w:after=\"240\" w:line=\"240\" w:lineRule=\"auto\"/>", "<w:b/>"),
        style("Caption", "Caption block", single, ""),
        style("Heading1", "heading 1", "<w:keepNext/><w:spacing w:before=\"240\" w:after=\"120\" w:line=\"240\" w:lineRule=\"auto\"/><w:outlineLvl w:val=\"0\"/>", "<w:b/>"),
        style("Heading2", "heading 2", "<w:keepNext/><w:spacing w:before=\"240\" w:after=\"120\" w:line=\"240\" w:lineRule=\"auto\"/><w:outlineLvl w:val=\"1\"/>", "<w:b/><w:i/>"),
        style("Heading3", "heading 3", "<w:keepNext/><w:spacing w:before=\"120\" w:after=\"60\" w:line=\"240\" w:lineRule=\"auto\"/><w:outlineLvl w:val=\"2\"/>", "<w:i/>"),
        style("Quote", "Quote", "<w:ind w:left=\"1440\" w:right=\"1440\"/><w:spacing w:before=\"120\" w:after=\"120\" w:line=\"240\" w:lineRule=\"auto\"/><w:jc w:val=\"both\"/>", ""),
        style("FootnoteText", "footnote text", single, &format!("<w:sz w:val=\"{}\"/>", size.saturating_sub(4).max(16))),
        style("Compact", "Compact", single, &format!("<w:sz w:val=\"{}\"/>", size.saturating_sub(4).max(16))),
        style("Letterhead", "Letterhead", single, &format!("<w:b/><w:sz w:val=\"{}\"/>", size + 4)),
    )
}

/// The page number, centred; a blocked draft's mark before it on every page.
fn footer_xml(notice: Option<&Notice>) -> String {
    let mark = notice
        .map(|n| styled_run(&format!("{} — page ", n.mark), true, false, NOTICE_COLOR))
        .unwrap_or_default();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<w:ftr {W_NS}><w:p><w:pPr><w:jc w:val=\"center\"/></w:pPr>{mark}<w:fldSimple w:instr=\" PAGE \"><w:r><w:t>1</w:t></w:r></w:fldSimple></w:p></w:ftr>"
    )
}

fn custom_xml(props: &[(String, String)]) -> String {
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<Properties xmlns=\"http://schemas.openxmlformats.org/officeDocument/2006/custom-properties\" xmlns:vt=\"http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes\">");
    for (i, (k, v)) in props.iter().enumerate() {
        s.push_str(&format!(
            "<property fmtid=\"{{D5CDD505-2E9C-101B-9397-08002B2CF9AE}}\" pid=\"{}\" name=\"{}\"><vt:lpwstr>{}</vt:lpwstr></property>",
            i + 2,
            escape::xml(k),
            escape::xml(v)
        ));
    }
    s.push_str("</Properties>");
    s
}

fn core_xml(d: &Document) -> String {
    let keywords: Vec<String> = d
        .properties
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<cp:coreProperties xmlns:cp=\"http://schemas.openxmlformats.org/package/2006/metadata/core-properties\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\" xmlns:dcterms=\"http://purl.org/dc/terms/\" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"><dc:title>{}</dc:title><dc:creator>lexrun</dc:creator><cp:keywords>{}</cp:keywords><dc:description>Drafted by lexrun from a workflow run; see the custom properties for its provenance.</dc:description></cp:coreProperties>",
        escape::xml(&match &d.notice {
            Some(n) => format!("{}: {}", n.mark, d.title),
            None => d.title.clone(),
        }),
        escape::xml(&keywords.join("; "))
    )
}

const CONTENT_TYPES: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/><Override PartName="/word/footnotes.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml"/><Override PartName="/word/footer1.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.footer+xml"/><Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/><Override PartName="/docProps/app.xml" ContentType="application/vnd.openxmlformats-officedocument.extended-properties+xml"/><Override PartName="/docProps/custom.xml" ContentType="application/vnd.openxmlformats-officedocument.custom-properties+xml"/></Types>"#;

const ROOT_RELS: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/><Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/extended-properties" Target="docProps/app.xml"/><Relationship Id="rId4" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/custom-properties" Target="docProps/custom.xml"/></Relationships>"#;

const DOC_RELS: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/footnotes" Target="footnotes.xml"/><Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/footer" Target="footer1.xml"/></Relationships>"#;

const APP: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties"><Application>lexrun</Application></Properties>"#;

/// Writes the document to `path` (through a temporary file beside it).
pub fn write(d: &Document, path: &Path) -> Result<(), super::DocumentError> {
    let opts = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default());
    let parts: [(&str, String); 9] = [
        ("[Content_Types].xml", CONTENT_TYPES.to_string()),
        ("_rels/.rels", ROOT_RELS.to_string()),
        ("word/_rels/document.xml.rels", DOC_RELS.to_string()),
        ("word/document.xml", document_xml(d)),
        ("word/styles.xml", styles_xml(&d.style, d.layout)),
        ("word/footnotes.xml", footnotes_xml(d)),
        ("word/footer1.xml", footer_xml(d.notice.as_ref())),
        ("docProps/core.xml", core_xml(d)),
        ("docProps/app.xml", APP.to_string()),
    ];
    crate::atomic::write_with(path, |file| {
        let mut z = zip::ZipWriter::new(file);
        for (name, xml) in parts.iter().chain(std::iter::once(&(
            "docProps/custom.xml",
            custom_xml(&d.properties),
        ))) {
            z.start_file(*name, opts).map_err(std::io::Error::other)?;
            z.write_all(xml.as_bytes())?;
        }
        z.finish().map_err(std::io::Error::other)?;
        Ok(())
    })
    .map_err(|source| super::DocumentError::Write {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notice_comes_first_and_marks_every_page() {
        let d = Document {
            title: "Declaration".into(),
            body: "1. I paid rent.".into(),
            notice: Some(Notice {
                mark: "BLOCKED DRAFT — NOT FOR FILING".into(),
                lines: vec!["Blocked draft".into(), "Two claims removed.".into()],
            }),
            ..Document::default()
        };
        let x = document_xml(&d);
        let (notice, title, body) = (
            x.find("BLOCKED DRAFT").unwrap(),
            x.find("DECLARATION").unwrap(),
            x.find("I paid rent.").unwrap(),
        );
        assert!(notice < title && title < body, "{x}");
        assert!(x.contains("Two claims removed."));
        assert!(footer_xml(d.notice.as_ref()).contains("BLOCKED DRAFT — NOT FOR FILING — page "));
        assert!(!footer_xml(None).contains("BLOCKED"));
        assert!(core_xml(&d).contains("<dc:title>BLOCKED DRAFT — NOT FOR FILING: Declaration"));
    }

    #[test]
    fn a_letter_and_a_memo_fill_in_what_the_record_leaves_out() {
        let record = Caption {
            plaintiff: "Jane Smith".into(),
            addressee: "\n  Acme & Sons  \n12 Main St".into(),
            ..Caption::default()
        };
        let d = Document {
            title: "demand letter".into(),
            body: "We write about the rent.".into(),
            caption: Some(record.clone()),
            layout: Layout::Letter,
            ..Document::default()
        };
        let x = document_xml(&d);
        assert!(x.contains("Dear Acme &amp; Sons:"), "{x}");
        assert!(
            x.contains(">Jane Smith</w:t>"),
            "the re: line names the case"
        );
        assert!(
            x.contains(&today()),
            "dated today when the record gives no date"
        );
        assert!(x.contains("______________________"), "a line to sign on");
        assert!(!x.contains("Sir or Madam"));
        let memo = document_xml(&Document {
            layout: Layout::Memo,
            caption: Some(Caption {
                addressee: String::new(),
                client: "Jane Smith".into(),
                re: "Rent withheld in May".into(),
                ..record
            }),
            ..d
        });
        assert!(memo.contains("MEMORANDUM") && memo.contains(">Rent withheld in May</w:t>"));
        assert!(memo.contains(">TO:</w:t></w:r><w:r><w:tab/></w:r><w:r><w:t xml:space=\"preserve\">Jane Smith</w:t>"), "{memo}");
        assert!(!memo.contains("Very truly yours"));
        let t = today();
        assert!(
            t.split_whitespace().count() == 3 && t.ends_with(|c: char| c.is_ascii_digit()),
            "{t}"
        );
    }

    #[test]
    fn document_parts_carry_caption_notes_and_numbers() {
        let d = Document {
            title: "Affidavit of Jane Smith".into(),
            body: "1. I paid **$1,250.00**.[^a]\n\n[^a]: Receipt, SMITH000004.".into(),
            caption: Some(Caption {
                court: "Superior Court".into(),
                case_number: "24-CV-0012".into(),
                plaintiff: "Jane Smith".into(),
                defendant: "Acme & Sons".into(),
                ..Caption::default()
            }),
            ..Document::default()
        };
        let x = document_xml(&d);
        assert!(
            x.contains("SUPERIOR COURT")
                && x.contains("ACME &amp; SONS,")
                && x.contains("Case No. 24-CV-0012")
        );
        assert!(x.contains("<w:footnoteReference w:id=\"1\"/>"));
        assert!(x.contains("<w:b/></w:rPr><w:t xml:space=\"preserve\">$1,250.00</w:t>"));
        assert!(footnotes_xml(&d).contains("Receipt, SMITH000004."));
    }
}
