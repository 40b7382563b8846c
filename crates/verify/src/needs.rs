//! Which pages are worth scanning. Every date, amount, case and statute a draft claims has
//! numbers that must appear on a page, each as a whole run of digits, for that page to
//! support it: a case its volume and its first page, a statute its section's leading
//! number, a date its year and day, an amount the groups it is written with. A page's digits
//! are read in one pass; a pattern for a kind runs on the page only if some wanted claim of
//! that kind has all its numbers there. The filter is exact: it skips only pages on which the
//! pattern could not find a wanted claim (tests compare it with scanning every page).

use foldhash::HashMap;

use super::claim::Key;

/// The runs of ASCII digits on a page, as values.
pub struct Numbers {
    runs: Vec<u64>,
}

impl Numbers {
    pub fn of(text: &str) -> Numbers {
        let mut runs = Vec::new();
        let b = text.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if !b[i].is_ascii_digit() {
                i += 1;
                continue;
            }
            let mut v: u64 = 0;
            while i < b.len() && b[i].is_ascii_digit() {
                v = v.saturating_mul(10).saturating_add(u64::from(b[i] - b'0'));
                i += 1;
            }
            runs.push(v);
        }
        runs.sort_unstable();
        runs.dedup();
        Numbers { runs }
    }

    fn has(&self, v: u64) -> bool {
        self.runs.binary_search(&v).is_ok()
    }
}

/// What else a page needs once one number of a claim is on it.
#[derive(Debug, Default)]
struct Rule {
    /// For each entry, at least one of its values is a run on the page.
    all: Vec<Vec<u64>>,
}

impl Rule {
    fn holds(&self, n: &Numbers) -> bool {
        self.all.iter().all(|any| any.iter().any(|v| n.has(*v)))
    }
}

/// Rules keyed by one number each claim must have on the page.
#[derive(Debug, Default)]
struct Triggers {
    rules: HashMap<u64, Vec<Rule>>,
    /// A claim with no number to look for: every page is scanned for its kind.
    every_page: bool,
}

impl Triggers {
    fn add(&mut self, trigger: u64, rule: Rule) {
        self.rules.entry(trigger).or_default().push(rule);
    }

    fn fire(&self, n: &Numbers) -> bool {
        self.every_page
            || n.runs.iter().any(|v| {
                self.rules
                    .get(v)
                    .is_some_and(|rules| rules.iter().any(|r| r.holds(n)))
            })
    }
}

/// Amounts from here on are scanned on every page: their cents went through a float.
const MONEY_EXACT: i64 = 1 << 50;

/// Which kinds a page must be scanned for.
#[derive(Debug, Default)]
pub struct Needs {
    cases: Triggers,
    statutes: Triggers,
    dates: Triggers,
    amounts: Triggers,
}

impl Needs {
    /// Records what a wanted claim needs.
    pub fn add(&mut self, key: &Key) {
        match key {
            // The citation scanner reads a page as a whole run of digits.
            Key::Case { volume, page, .. } => self.cases.add(
                u64::from(*volume),
                Rule {
                    all: vec![vec![u64::from(*page)]],
                },
            ),
            Key::Statute { section, .. } => match leading_number(section) {
                Some(v) => self.statutes.add(v, Rule::default()),
                None => self.statutes.every_page = true,
            },
            Key::Date { year, day, .. } => {
                let Ok(y) = u64::try_from(*year) else {
                    return;
                };
                // A month as a whole (day 0) is supported by any day of it.
                let rule = || Rule {
                    all: if *day == 0 {
                        Vec::new()
                    } else {
                        vec![vec![u64::from(*day)]]
                    },
                };
                self.dates.add(y, rule());
                // `01/05/24`: a two-digit year is 2000–2099.
                if (2000..2100).contains(&y) {
                    self.dates.add(y - 2000, rule());
                }
            }
            Key::Money { cents } => self.add_money(*cents),
            Key::Percent { thousandths } => {
                let Ok(t) = u64::try_from(*thousandths) else {
                    return;
                };
                self.amounts.add(t / 1000, Rule::default());
                // `12.9996%` rounds to 13.000: its whole part is one less.
                if t % 1000 == 0 && t > 0 {
                    self.amounts.add(t / 1000 - 1, Rule::default());
                }
            }
            _ => {}
        }
    }

    /// `$12500`, `$12,500.00`, `$12.5 thousand`: the whole dollars, or the first and last
    /// groups, or the whole part before a scale (at most two decimals); and the cents when
    /// there are any (`.05`, `.5` for fifty).
    fn add_money(&mut self, cents: i64) {
        let Ok(c) = u64::try_from(cents) else {
            return;
        };
        if cents >= MONEY_EXACT {
            self.amounts.every_page = true;
            return;
        }
        let (d, fraction) = (c / 100, c % 100);
        let cents_rule: Vec<Vec<u64>> = match fraction {
            0 => Vec::new(),
            f if f % 10 == 0 => vec![vec![f, f / 10]],
            f => vec![vec![f]],
        };
        self.amounts.add(
            d,
            Rule {
                all: cents_rule.clone(),
            },
        );
        if d >= 1000 {
            let mut lead = d;
            while lead >= 1000 {
                lead /= 1000;
            }
            let mut all = cents_rule;
            all.push(vec![d % 1000]);
            self.amounts.add(lead, Rule { all });
        }
        if fraction == 0 {
            for scale in [1_000, 1_000_000, 1_000_000_000] {
                if d % (scale / 100) == 0 {
                    self.amounts.add(d / scale, Rule::default());
                }
            }
        }
    }

    pub fn cases(&self, n: &Numbers) -> bool {
        self.cases.fire(n)
    }

    pub fn statutes(&self, n: &Numbers) -> bool {
        self.statutes.fire(n)
    }

    pub fn dates(&self, n: &Numbers) -> bool {
        self.dates.fire(n)
    }

    pub fn amounts(&self, n: &Numbers) -> bool {
        self.amounts.fire(n)
    }

    /// Every page scanned for every kind: what the filter is compared with in tests.
    #[cfg(test)]
    pub fn everything() -> Needs {
        let every = || Triggers {
            rules: HashMap::default(),
            every_page: true,
        };
        Needs {
            cases: every(),
            statutes: every(),
            dates: every(),
            amounts: every(),
        }
    }
}

/// The leading run of digits of a section (`1942.4` → 1942).
fn leading_number(s: &str) -> Option<u64> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    s[..digits].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_whole_runs() {
        let n = Numbers::of("USD 6,495.04 on 01/05/24, 123456");
        assert_eq!(n.runs, vec![1, 4, 5, 6, 24, 495, 123456]);
    }

    #[test]
    fn an_amount_needs_its_groups_and_cents() {
        let mut needs = Needs::default();
        needs.add(&Key::Money { cents: 649504 });
        assert!(needs.amounts(&Numbers::of("USD 6,495.04")));
        assert!(needs.amounts(&Numbers::of("$6495.04")));
        assert!(!needs.amounts(&Numbers::of("USD 6,495.05")));
        assert!(!needs.amounts(&Numbers::of("USD 6,496.04")));
        let mut needs = Needs::default();
        needs.add(&Key::Money {
            cents: 1_250_000_000,
        });
        assert!(needs.amounts(&Numbers::of("$12.5 million")));
        assert!(needs.amounts(&Numbers::of("$12,500,000")));
    }

    /// Every claim the extractors find in a text, with whether its needs fire on that text.
    fn fired(text: &str) -> Vec<(String, bool)> {
        use crate::extract;
        let n = Numbers::of(text);
        let cases = extract::citations(text, &Default::default());
        let mut all = extract::dates(text);
        all.extend(extract::amounts(text));
        all.extend(extract::statutes_and_ids(text, &cases));
        all.extend(cases);
        all.into_iter()
            .map(|c| {
                let mut needs = Needs::default();
                needs.add(&c.key);
                let fires =
                    needs.cases(&n) || needs.statutes(&n) || needs.dates(&n) || needs.amounts(&n);
                (
                    format!("{} ({})", c.text, c.key),
                    fires || matches!(c.key, Key::Unresolved(_) | Key::Unrecognized(_)),
                )
            })
            .collect()
    }

    #[test]
    fn what_a_page_says_it_needs() {
        let text = "$12,345.00; USD 6,495.04; $1.25 million; $0.5 billion; $77700; $ 83.5; \
            US$ 3,000,000.10; 12.5%; 0.9996%; 98.9996 percent; 61 percent; January 9, 2014; \
            Jan. 8, 2015; Sept. 15, 2016; 6 January 2017; 01/07/2018; 1/4/24; 2019-01-03; \
            this 2nd day of January, 2020; Bush v. Gore, 531 U.S. 98, 99-100 (2000); \
            531 U.S. at 99; Id. at 100; Bush, supra, at 101; 28 U.S.C. § 1332(a); \
            42 U.S.C. §§ 1983-1985; Cal. Civ. Code § 1942.4; Fed. R. Civ. P. 11(b)(6); Id.; \
            7 F.3d 123456 (1996); 17 Cal. 4th 1, 5 (1998).";
        // Each snippet alone, so that no other number on the page makes up for a missing one;
        // short forms, `supra` and `Id.` with the citation they refer to.
        let mut got = Vec::new();
        for snippet in text.split("; ") {
            let snippet = match snippet {
                s if s.contains(" at ") || s.starts_with("Id") => {
                    format!("Bush v. Gore, 531 U.S. 98 (2000); 28 U.S.C. § 1332(a); {s}")
                }
                s => s.to_string(),
            };
            got.extend(fired(&snippet));
        }
        assert!(got.len() >= 30, "{got:#?}");
        for (claim, fires) in got {
            assert!(fires, "{claim}");
        }
    }

    proptest::proptest! {
        /// The filter never skips a page that holds a claim: every claim found in a text
        /// needs only numbers that text has.
        #[test]
        fn a_text_always_has_what_its_claims_need(
            dollars in 0u64..5_000_000_000,
            cents in 0u64..100,
            y in 1900i32..2100,
            m in 1u32..13,
            d in 1u32..29,
            vol in 1u32..2000,
            page in 1u32..99_999,
            section in 1u32..20_000,
            form in 0usize..6,
        ) {
            let grouped = {
                let s = dollars.to_string();
                let mut out = String::new();
                for (i, ch) in s.chars().enumerate() {
                    if i > 0 && (s.len() - i) % 3 == 0 {
                        out.push(',');
                    }
                    out.push(ch);
                }
                out
            };
            let month = ["January", "Feb.", "March", "Apr.", "May", "June", "Jul.", "August",
                "Sept.", "Oct.", "November", "Dec."][m as usize - 1];
            let money = [
                format!("${dollars}"),
                format!("${dollars}.{cents:02}"),
                format!("${dollars}.{}", cents / 10),
                format!("USD {grouped}.{cents:02}"),
                format!("${}.{cents:02} million", dollars % 1000),
                format!("{}.{cents}% and {} percent", dollars % 100, dollars % 1000),
            ][form].clone();
            let date = [
                format!("{month} {d}, {y}"),
                format!("{d} {month} {y}"),
                format!("{m:02}/{d:02}/{y}"),
                format!("{m}/{d}/{:02}", y % 100),
                format!("{y}-{m:02}-{d:02}"),
                format!("this {d}th day of {month}, {y}"),
            ][form].clone();
            let text = format!(
                "Paid {money} on {date}. See Doe v. Roe, {vol} F.3d {page}, {} (9th Cir. {y}); \
                 {vol} F.3d at {}; 42 U.S.C. § {section}(a); Cal. Civ. Code § {section}.{form}.",
                page + 2,
                page + 1
            );
            for (claim, fires) in fired(&text) {
                proptest::prop_assert!(fires, "{} in {}", claim, text);
            }
        }
    }
}
