//! `production NAME { … }`: the settings of a production volume, read into the tree. It is a
//! step like a tool (`reads`, `after`), so it is held as a [`ToolDecl`] of kind `production`
//! with its own settings beside.

use pest::iterators::{Pair, Pairs};

use super::ast::*;
use super::grammar::{Block, Rule};
use super::parse::Builder;
use crate::diagnostic::Span;

impl Builder {
    pub(super) fn production(&mut self, pair: Pair<Rule>, span: Span) -> Option<ToolDecl> {
        let mut it = pair.into_inner();
        let kw = it.next()?;
        let kind = Spanned::new("production".to_string(), self.span(&kw));
        let name = self.name(it.next()?);
        let mut d = ToolDecl::new(name, kind, span);
        let mut p = ProductionDecl::default();
        for (e, rule, espan, key, first, _, mut inner) in self.entries(it) {
            let _ = (|| -> Option<()> {
                match rule {
                    Rule::after_clause => {
                        // The header's `after` has no keyword pair to skip.
                        d.after
                            .extend(e.clone().into_inner().skip(1).map(|x| self.name(x)));
                    }
                    Rule::after_e => d.after.extend(inner.map(|x| self.name(x))),
                    Rule::reads_e => d.reads.extend(inner.map(|x| self.name(x))),
                    Rule::volume_e => {
                        let v = self.string(inner.next()?);
                        self.set(&mut p.volume, v, &key, espan, first);
                    }
                    Rule::bates_e => {
                        let b = self.bates(inner, espan)?;
                        self.set(&mut p.bates, b, &key, espan, first);
                    }
                    Rule::legend_e => {
                        let n = self.name(inner.next()?);
                        let words = self.string(inner.next()?);
                        if let Some((prev, _)) = p.legends.iter().find(|(x, _)| x.node == n.node) {
                            let prev_span = prev.span;
                            self.duplicate(&format!("legend {}", n.node), espan, prev_span);
                        } else {
                            p.legends.push((n, words));
                        }
                    }
                    Rule::designate_e => {
                        let n = self.name(inner.next()?);
                        let globs = inner.map(|x| self.string(x)).collect();
                        p.designate.push((n, globs));
                    }
                    Rule::redact_e => p.redact.push(self.redact(inner, espan)?),
                    Rule::withhold_e => p.withhold.push(self.withhold(inner, espan)?),
                    Rule::natives_e => p.natives.extend(inner.map(|x| self.string(x))),
                    Rule::images_e => {
                        let v = self.name(inner.next()?);
                        self.set(&mut p.images, v, &key, espan, first);
                    }
                    Rule::fields_e => p.fields.extend(inner.map(|x| self.name(x))),
                    Rule::bad_entry => d.broken.extend(self.bad_entry(&e, Block::Production)),
                    _ => {}
                }
                Some(())
            })();
        }
        d.production = Some(Box::new(p));
        Some(d)
    }

    /// A `redact` entry: what is redacted (a kind of text, a pattern, or a box on a page of
    /// a file) and why.
    fn redact(&mut self, mut inner: Pairs<Rule>, espan: Span) -> Option<RedactDecl> {
        let what = inner.next()?;
        let what = match what.as_rule() {
            Rule::redact_kind => RedactWhat::Kind(self.name(what.into_inner().next()?)),
            Rule::redact_pattern => RedactWhat::Pattern(self.string(what.into_inner().nth(1)?)),
            _ => {
                let mut b = what.into_inner().skip(1);
                let file = self.string(b.next()?);
                b.next()?;
                let page = self.int_u32(b.next()?)?;
                let at = b.next()?;
                let mut nums = [0.0; 4];
                let mut rect_span = self.span(&at);
                for n in nums.iter_mut() {
                    let v = self.decimal(b.next()?)?;
                    rect_span = rect_span.to(v.span);
                    *n = v.node;
                }
                RedactWhat::Box {
                    file,
                    page,
                    rect: Spanned::new(nums, rect_span),
                }
            }
        };
        inner.next()?;
        let reason = self.string(inner.next()?);
        Some(RedactDecl {
            what,
            reason,
            span: espan,
        })
    }

    /// A `withhold` entry: the files, the privilege they are withheld under, and why.
    fn withhold(&mut self, inner: Pairs<Rule>, espan: Span) -> Option<WithholdDecl> {
        let mut files = Vec::new();
        let mut privilege = None;
        let mut because = None;
        let mut after_as = false;
        for x in inner {
            match x.as_rule() {
                Rule::string if !after_as => files.push(self.string(x)),
                Rule::string if privilege.is_none() => privilege = Some(self.string(x)),
                Rule::string => because = Some(self.string(x)),
                Rule::kw_as => after_as = true,
                _ => {}
            }
        }
        Some(WithholdDecl {
            files,
            privilege: privilege?,
            because,
            span: espan,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::ast::{Item, RedactWhat};
    use crate::parse;

    #[test]
    fn a_production_reads_every_setting() {
        let text = r#"production vol1 after stamp {
  reads     collected
  volume    "VOL001"
  bates     "HARBOR" start 1 width 7
  legend    confidential "CONFIDENTIAL"
  legend    aeo "HIGHLY CONFIDENTIAL – ATTORNEYS' EYES ONLY"
  designate confidential "**"
  designate aeo "finance/**", "board/**"
  natives   "**/*.xlsx"
  redact    ssn as "PII"
  redact    pattern "ACCT-[0-9]+" as "PII"
  redact    box "letter.png" page 1 at 72, 90.5, 200, 14 as "PRIVILEGE"
  withhold  "memo/**" as "Attorney-Client Privilege" because "Advice on the lease"
  images    pdf
  fields    BEGBATES, ENDBATES
}"#;
        let p = parse(text, 0);
        assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
        let Item::Tool(t) = &p.file.items[0] else {
            panic!()
        };
        assert_eq!(t.kind.node, "production");
        assert_eq!(t.after[0].node, "stamp");
        assert_eq!(t.reads[0].node, "collected");
        let d = t.production.as_ref().unwrap();
        assert_eq!(d.volume.as_ref().unwrap().node, "VOL001");
        assert_eq!(d.bates.as_ref().unwrap().width.as_ref().unwrap().node, 7);
        assert_eq!(d.legends.len(), 2);
        assert_eq!(d.designate[1].1.len(), 2);
        assert_eq!(d.redact.len(), 3);
        let RedactWhat::Box { page, rect, .. } = &d.redact[2].what else {
            panic!()
        };
        assert_eq!((page.node, rect.node), (1, [72.0, 90.5, 200.0, 14.0]));
        assert_eq!(d.withhold[0].privilege.node, "Attorney-Client Privilege");
        assert_eq!(
            d.withhold[0].because.as_ref().unwrap().node,
            "Advice on the lease"
        );
        assert_eq!(d.images.as_ref().unwrap().node, "pdf");
        assert_eq!(d.fields.len(), 2);
    }
}
