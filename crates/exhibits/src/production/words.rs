//! Words on a page with their boxes, from the page's text layer (`pdftotext -bbox-layout`)
//! or, for a scan, from tesseract's word boxes; and the page's text rebuilt from them, so
//! that what a pattern matches is exactly what is blacked out; then which words a redaction
//! covers, the boxes over them and the text produced without them.

use super::page::{Label, PxBox};

#[derive(Clone, Debug)]
pub struct Word {
    pub text: String,
    /// In pixels at the production's resolution, top-left origin.
    pub bx: PxBox,
    /// Words on one line share a number; a new number starts a new line.
    pub line: usize,
}

/// A page's words joined into text (a space between words, a newline between lines), with
/// each word's byte range in it.
pub struct Joined {
    pub text: String,
    pub ranges: Vec<(usize, usize)>,
}

pub fn join(words: &[Word]) -> Joined {
    let mut text = String::new();
    let mut ranges = Vec::with_capacity(words.len());
    let mut last = None;
    for w in words {
        if let Some(l) = last {
            text.push(if l == w.line { ' ' } else { '\n' });
        }
        let start = text.len();
        text.push_str(&w.text);
        ranges.push((start, text.len()));
        last = Some(w.line);
    }
    Joined { text, ranges }
}

fn attr(tag: &str, name: &str) -> Option<f64> {
    let key = format!("{name}=\"");
    let i = tag.find(&key)? + key.len();
    let j = tag[i..].find('"')? + i;
    tag[i..j].parse().ok()
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// Pages of `pdftotext -bbox-layout` output: (width, height in points, words in pixels).
pub fn from_bbox_layout(html: &str, dpi: f64) -> Vec<(f64, f64, Vec<Word>)> {
    let k = dpi / 72.0;
    let mut pages = Vec::new();
    let mut line = 0usize;
    for chunk in html.split("<page ").skip(1) {
        let head = &chunk[..chunk.find('>').unwrap_or(0)];
        let (w, h) = (
            attr(head, "width").unwrap_or(0.0),
            attr(head, "height").unwrap_or(0.0),
        );
        let mut words = Vec::new();
        for l in chunk.split("<line").skip(1) {
            line += 1;
            for wd in l.split("<word ").skip(1) {
                let Some(end) = wd.find('>') else { continue };
                let tag = &wd[..end];
                let text = wd[end + 1..].split("</word>").next().unwrap_or("");
                let (Some(x0), Some(y0), Some(x1), Some(y1)) = (
                    attr(tag, "xMin"),
                    attr(tag, "yMin"),
                    attr(tag, "xMax"),
                    attr(tag, "yMax"),
                ) else {
                    continue;
                };
                words.push(Word {
                    text: unescape(text),
                    bx: PxBox {
                        x0: (x0 * k).floor().max(0.0) as usize,
                        y0: (y0 * k).floor().max(0.0) as usize,
                        x1: (x1 * k).ceil() as usize,
                        y1: (y1 * k).ceil() as usize,
                    },
                    line,
                });
            }
        }
        pages.push((w, h, words));
    }
    pages
}

/// Words of tesseract's TSV output (already in pixels).
pub fn from_tsv(tsv: &str) -> Vec<Word> {
    let mut words = Vec::new();
    let mut lines: Vec<(String, usize)> = Vec::new();
    for row in tsv.lines().skip(1) {
        let c: Vec<&str> = row.split('\t').collect();
        if c.len() < 12 || c[0] != "5" || c[11].trim().is_empty() {
            continue;
        }
        let key = format!("{}/{}/{}", c[2], c[3], c[4]);
        let line = match lines.iter().find(|(k, _)| *k == key) {
            Some((_, n)) => *n,
            None => {
                lines.push((key, lines.len()));
                lines.len() - 1
            }
        };
        let n = |i: usize| c[i].parse::<usize>().unwrap_or(0);
        words.push(Word {
            text: c[11].trim().to_string(),
            bx: PxBox {
                x0: n(6),
                y0: n(7),
                x1: n(6) + n(8),
                y1: n(7) + n(9),
            },
            line,
        });
    }
    words
}

/// Each word's label, where a pattern's match covers any of it.
pub(super) fn word_labels(
    joined: &Joined,
    ms: &[(usize, usize, String, usize)],
) -> Vec<Option<String>> {
    joined
        .ranges
        .iter()
        .map(|(a, b)| {
            ms.iter()
                .find(|m| m.0 < *b && *a < m.1)
                .map(|m| m.2.clone())
        })
        .collect()
}

/// Whether the patterns would redact (nearly) every character of a raster page's words.
pub(super) fn whole_raster_page(words: &[Word], label_of: &[Option<String>]) -> bool {
    let covered = label_of.iter().filter(|l| l.is_some()).count();
    let chars: usize = words.iter().map(|w| w.text.chars().count()).sum();
    let covered_chars: usize = words
        .iter()
        .zip(label_of)
        .filter(|(_, l)| l.is_some())
        .map(|(w, _)| w.text.chars().count())
        .sum();
    covered > 0 && whole_page(covered_chars, chars)
}

/// The boxes of the redacted words: adjacent words under one label on one line make one
/// box.
pub(super) fn word_boxes(words: &[Word], label_of: &[Option<String>]) -> Vec<(PxBox, String)> {
    let mut px_boxes: Vec<(PxBox, String)> = Vec::new();
    for (wi, w) in words.iter().enumerate() {
        let Some(why) = &label_of[wi] else { continue };
        let joins =
            wi > 0 && label_of[wi - 1].as_ref() == Some(why) && words[wi - 1].line == w.line;
        match px_boxes.last_mut() {
            Some((b, _)) if joins => {
                b.x0 = b.x0.min(w.bx.x0);
                b.y0 = b.y0.min(w.bx.y0);
                b.x1 = b.x1.max(w.bx.x1);
                b.y1 = b.y1.max(w.bx.y1);
            }
            _ => px_boxes.push((w.bx, why.clone())),
        }
    }
    px_boxes
}

/// The produced text of a raster page: its words, with each redacted run as its label.
pub(super) fn produced_text(words: &[Word], label_of: &[Option<String>]) -> String {
    let mut text = String::new();
    let mut last_line = None;
    for (wi, w) in words.iter().enumerate() {
        let same = last_line == Some(w.line);
        match &label_of[wi] {
            Some(why) => {
                let continues = wi > 0 && same && label_of[wi - 1].as_ref() == Some(why);
                if continues {
                    continue;
                }
                if last_line.is_some() {
                    text.push(if same { ' ' } else { '\n' });
                }
                text.push_str(&format!("[{why}]"));
            }
            None => {
                if last_line.is_some() {
                    text.push(if same { ' ' } else { '\n' });
                }
                text.push_str(&w.text);
            }
        }
        last_line = Some(w.line);
    }
    text.push('\n');
    text
}

/// The labels of a vector page's redactions, a little padded, in the page's own space.
pub(super) fn point_labels(px_boxes: &[(PxBox, String)], crop: [f64; 4], dpi: u32) -> Vec<Label> {
    let k = dpi as f64 / 72.0;
    let pad = 1.0;
    px_boxes
        .iter()
        .map(|(b, why)| Label {
            x: crop[0] + b.x0 as f64 / k - pad,
            y: crop[3] - b.y1 as f64 / k - pad,
            w: (b.x1 - b.x0) as f64 / k + 2.0 * pad,
            h: (b.y1 - b.y0) as f64 / k + 2.0 * pad,
            text: why.clone(),
        })
        .collect()
}

/// Whether the redactions would leave nothing of a page worth producing: then the document
/// should be withheld, or the pattern narrowed.
pub(super) fn whole_page(covered: usize, total: usize) -> bool {
    total >= 20 && covered * 10 >= total * 9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bbox_layout_words_scale_to_pixels_and_keep_lines() {
        let html = r#"<doc><page width="612.000000" height="792.000000"><flow><block><line xMin="1">
<word xMin="72.0" yMin="72.0" xMax="96.0" yMax="84.0">SSN</word>
<word xMin="100.0" yMin="72.0" xMax="160.0" yMax="84.0">123-45-6789</word></line>
<line><word xMin="72.0" yMin="90.0" xMax="90.0" yMax="100.0">A&amp;B</word></line></block></flow></page></doc>"#;
        let pages = from_bbox_layout(html, 300.0);
        assert_eq!(pages.len(), 1);
        let (w, h, words) = &pages[0];
        assert_eq!((*w, *h), (612.0, 792.0));
        assert_eq!(words.len(), 3);
        assert_eq!(words[0].bx.x0, 300);
        let j = join(words);
        assert_eq!(j.text, "SSN 123-45-6789\nA&B");
        assert_eq!(&j.text[j.ranges[1].0..j.ranges[1].1], "123-45-6789");
    }

    #[test]
    fn tesseract_words_group_by_line() {
        let tsv = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n\
5\t1\t1\t1\t1\t1\t10\t20\t30\t40\t96\tHello\n\
5\t1\t1\t1\t1\t2\t50\t20\t30\t40\t96\tthere\n\
5\t1\t1\t1\t2\t1\t10\t80\t30\t40\t96\tnext\n";
        let w = from_tsv(tsv);
        assert_eq!(join(&w).text, "Hello there\nnext");
        assert_eq!(w[1].bx.x1, 80);
    }
}
