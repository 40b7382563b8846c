//! A generated evidence set and a draft with planted fabrications, for measuring the verifier.
//! Shared by `tests/verify.rs` (accuracy) and `benches/verify.rs` (speed and memory).
#![allow(dead_code)]

use std::fmt::Write;

/// A small deterministic generator (xorshift), so every run plants the same facts.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len() as u64) as usize]
    }
}

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
const REPORTERS: [(&str, &[&str]); 6] = [
    ("U.S.", &["U.S.", "U. S."]),
    ("F.3d", &["F.3d", "F. 3d"]),
    ("F. Supp. 2d", &["F. Supp. 2d", "F.Supp.2d"]),
    ("Cal. App. 4th", &["Cal. App. 4th", "Cal.App.4th"]),
    ("N.E.2d", &["N.E.2d", "N.E. 2d"]),
    ("S. Ct.", &["S. Ct.", "S.Ct."]),
];
/// Years in which each reporter above published.
const YEARS: [(u32, u32); 6] = [
    (1950, 2019),
    (1994, 2020),
    (1989, 2013),
    (1992, 2015),
    (1950, 2013),
    (1950, 2019),
];
const WORDS: [&str; 24] = [
    "tenant",
    "landlord",
    "notice",
    "repair",
    "premises",
    "payment",
    "invoice",
    "contract",
    "delivery",
    "breach",
    "warranty",
    "damages",
    "deposit",
    "written",
    "approved",
    "schedule",
    "inspection",
    "vendor",
    "account",
    "owner",
    "project",
    "steel",
    "mold",
    "habitability",
];

/// One fact stated on a page of the evidence.
#[derive(Clone)]
pub enum Fact {
    Date(i32, u32, u32),
    Money(u64),
    Case {
        vol: u32,
        rep: usize,
        page: u32,
        pin: u32,
        year: u32,
    },
    Statute(u32),
    Quote(Vec<&'static str>),
}

pub struct Corpus {
    /// Files of pages; pages end with their Bates stamp.
    pub files: Vec<(String, Vec<String>)>,
    /// The draft, and for each claim written into it: its text and whether it is genuine.
    pub draft: String,
    pub planted: Vec<(String, bool)>,
}

fn date_text(rng: &mut Rng, y: i32, m: u32, d: u32) -> String {
    let name = MONTHS[(m - 1) as usize];
    match rng.below(5) {
        0 => format!("{name} {d}, {y}"),
        1 => format!("{}. {d}, {y}", &name[..3]),
        2 => format!("{d} {name} {y}"),
        3 => format!("{m:02}/{d:02}/{y}"),
        _ => format!("{y}-{m:02}-{d:02}"),
    }
}

fn money_text(rng: &mut Rng, cents: u64) -> String {
    let dollars = cents / 100;
    let mut grouped = String::new();
    let s = dollars.to_string();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    match rng.below(3) {
        0 => format!("${grouped}.{:02}", cents % 100),
        1 => format!("$ {grouped}.{:02}", cents % 100),
        _ => format!("USD {grouped}.{:02}", cents % 100),
    }
}

fn case_text(
    rng: &mut Rng,
    vol: u32,
    rep: usize,
    page: u32,
    pin: Option<u32>,
    year: u32,
) -> String {
    let r = rng.pick(REPORTERS[rep].1);
    match pin {
        Some(p) => format!("Doe v. Roe, {vol} {r} {page}, {p} ({year})"),
        None => format!("Doe v. Roe, {vol} {r} {page} ({year})"),
    }
}

/// `pages` pages of evidence in files of 100, and a draft with `claims` claims, about a
/// quarter of them fabricated by shifting one detail of a genuine fact.
pub fn generate(pages: usize, claims: usize, seed: u64) -> Corpus {
    let mut rng = Rng::new(seed);
    let mut facts: Vec<(Fact, String)> = Vec::new();
    let mut files = Vec::new();
    let mut bates = 1u64;
    for f in 0..pages.div_ceil(100) {
        let mut file_pages = Vec::new();
        for _ in 0..100.min(pages - f * 100) {
            let mut text = String::new();
            for _ in 0..6 {
                // Filler prose between the facts, as real documents have.
                let filler: Vec<&str> = (0..40).map(|_| *rng.pick(&WORDS)).collect();
                let _ = writeln!(text, "{}.", filler.join(" "));
                let fact = match rng.below(5) {
                    0 => Fact::Date(
                        1990 + rng.below(35) as i32,
                        1 + rng.below(12) as u32,
                        1 + rng.below(28) as u32,
                    ),
                    1 => Fact::Money(100 * (50 + rng.below(500_000)) + rng.below(100)),
                    2 => {
                        let vol = 100 + rng.below(800) as u32;
                        let rep = rng.below(REPORTERS.len() as u64) as usize;
                        let page = 1 + rng.below(1500) as u32;
                        // A year within the reporter's own years, as a real case has.
                        let (first, last) = YEARS[rep];
                        let year = first + (rng.below(70) as u32) % (last - first + 1);
                        Fact::Case {
                            vol,
                            rep,
                            page,
                            pin: 0,
                            year,
                        }
                    }
                    3 => Fact::Statute(1000 + rng.below(8000) as u32),
                    _ => Fact::Quote((0..12).map(|_| *rng.pick(&WORDS)).collect()),
                };
                let fact = match fact {
                    Fact::Case {
                        vol,
                        rep,
                        page,
                        year,
                        ..
                    } => Fact::Case {
                        vol,
                        rep,
                        page,
                        pin: page + 1 + rng.below(20) as u32,
                        year,
                    },
                    other => other,
                };
                let stated = match &fact {
                    Fact::Date(y, m, d) => format!(
                        "The notice was sent on {}.",
                        date_text(&mut rng, *y, *m, *d)
                    ),
                    Fact::Money(c) => format!("The amount paid was {}.", money_text(&mut rng, *c)),
                    Fact::Case {
                        vol,
                        rep,
                        page,
                        pin,
                        year,
                    } => {
                        format!(
                            "See {}.",
                            case_text(&mut rng, *vol, *rep, *page, Some(*pin), *year)
                        )
                    }
                    Fact::Statute(s) => format!("Under Cal. Civ. Code § {s}, the duty applies."),
                    Fact::Quote(w) => format!("The clause reads: \"{}.\"", w.join(" ")),
                };
                let _ = writeln!(text, "{stated}");
                facts.push((fact, format!("{:06}", bates)));
            }
            let _ = writeln!(text, "\nGEN{bates:06}");
            bates += 1;
            file_pages.push(text);
        }
        files.push((format!("evidence-{f:03}.txt"), file_pages));
    }

    let mut draft = String::from("# Generated draft\n\n");
    let mut planted = Vec::new();
    for i in 0..claims {
        let (fact, page_bates) = rng.pick(&facts).clone();
        let genuine = rng.below(4) != 0;
        let text = match (&fact, genuine) {
            (Fact::Date(y, m, d), true) => date_text(&mut rng, *y, *m, *d),
            (Fact::Date(y, m, d), false) => {
                // Shift the day within the month, so the date stays valid.
                let d2 = if *d < 28 { d + 1 } else { d - 1 };
                date_text(&mut rng, *y, *m, d2)
            }
            (Fact::Money(c), true) => money_text(&mut rng, *c),
            (Fact::Money(c), false) => {
                let shifted = c + 100 * (1 + rng.below(9));
                money_text(&mut rng, shifted)
            }
            (
                Fact::Case {
                    vol,
                    rep,
                    page,
                    pin,
                    year,
                },
                true,
            ) => case_text(&mut rng, *vol, *rep, *page, Some(*pin), *year),
            (
                Fact::Case {
                    vol,
                    rep,
                    page,
                    pin,
                    year,
                },
                false,
            ) => match rng.below(3) {
                0 => case_text(&mut rng, vol + 1, *rep, *page, Some(*pin), *year),
                1 => case_text(&mut rng, *vol, *rep, *page, Some(pin + 40), *year),
                _ => case_text(&mut rng, *vol, *rep, *page, Some(*pin), year + 1),
            },
            (Fact::Statute(s), true) => format!("Cal. Civ. Code § {s}"),
            (Fact::Statute(s), false) => format!("Cal. Civ. Code § {}", s + 9000),
            (Fact::Quote(w), true) => {
                if rng.below(2) == 0 {
                    format!("\"{}\"", w[2..9].join(" "))
                } else {
                    format!("\"{} . . . {}\"", w[1..5].join(" "), w[7..11].join(" "))
                }
            }
            (Fact::Quote(w), false) => {
                let mut v: Vec<&str> = w[2..9].to_vec();
                v[3] = if v[3] == "never" { "always" } else { "never" };
                format!("\"{}\"", v.join(" "))
            }
        };
        let bates_genuine = rng.below(4) != 0;
        let bates_text = if bates_genuine {
            format!("GEN{page_bates}")
        } else {
            format!("GEN{:06}", 900_000 + i)
        };
        let _ = writeln!(
            draft,
            "{}. The record shows {text} ({bates_text}).\n",
            i + 1
        );
        planted.push((text, genuine));
        planted.push((bates_text, bates_genuine));
    }
    Corpus {
        files,
        draft,
        planted,
    }
}
