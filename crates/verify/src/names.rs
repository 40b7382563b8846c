//! Case names as courts write them: the name a draft gives before a citation, the caption an
//! opinion among the sources begins with, and whether the two can be the same case — compared
//! as courts abbreviate parties (Bluebook T6/T10: `Servs.`, `Nat'l`, `Cnty.`), whatever the
//! `v.`, `In re`, `ex rel.`, corporate suffixes and a letter of OCR noise (`Unitcd`).

/// Words that start a citation sentence rather than a party's name.
const SIGNALS: &[&str] = &[
    "see",
    "also",
    "cf",
    "cf.",
    "accord",
    "but",
    "compare",
    "with",
    "contra",
    "e.g.",
    "e.g.,",
    "in",
    "and",
    "or",
    "under",
    "citing",
    "quoting",
    "following",
    "overruling",
    "affirming",
    "reversing",
    "as",
    "by",
    "held",
    "holds",
    "that",
    "the",
    "under",
];

/// Words joining a party's name that are not capitalised.
const JOINERS: &[&str] = &[
    "of", "the", "and", "&", "de", "del", "la", "van", "von", "du", "for", "ex", "rel.", "rel",
    "on", "in", "re", "a", "an", "et", "al.", "al", "d/b/a", "dba", "n.a.", "to", "at", "by",
];

/// Words no party can be told apart by: the public parties, corporate forms, procedural
/// roles and the words of a caption's court.
const GENERIC: &[&str] = &[
    "v",
    "vs",
    "re",
    "in",
    "ex",
    "rel",
    "parte",
    "matter",
    "of",
    "the",
    "and",
    "a",
    "an",
    "for",
    "on",
    "to",
    "by",
    "at",
    "et",
    "al",
    "inc",
    "incorporated",
    "corp",
    "corporation",
    "co",
    "company",
    "companies",
    "llc",
    "ltd",
    "limited",
    "lp",
    "llp",
    "plc",
    "pc",
    "pa",
    "na",
    "association",
    "estate",
    "city",
    "county",
    "town",
    "township",
    "village",
    "department",
    "board",
    "united",
    "states",
    "state",
    "people",
    "commonwealth",
    "commissioner",
    "government",
    "us",
    "usa",
    "america",
    "american",
    "national",
    "international",
    "bank",
    "insurance",
    "services",
    "service",
    "systems",
    "group",
    "holdings",
    "trust",
    "federal",
    "district",
    "court",
    "plaintiff",
    "plaintiffs",
    "defendant",
    "defendants",
    "appellant",
    "appellants",
    "appellee",
    "appellees",
    "petitioner",
    "petitioners",
    "respondent",
    "respondents",
    "others",
    "individually",
    "behalf",
    "similarly",
    "situated",
    "administrator",
    "administratrix",
    "executor",
    "secretary",
    "attorney",
    "general",
    "director",
    "warden",
    "sheriff",
    "internal",
    "revenue",
    "marriage",
    "guardianship",
    "adoption",
    "doe",
    "roe",
    "circuit",
    "appeals",
    "supreme",
    "superior",
    "division",
    "opinion",
    "memorandum",
    "order",
    "no",
    "cir",
    "ct",
    "app",
    "dist",
    "civil",
    "action",
    "case",
    "civ",
    "cv",
    "new",
    "north",
    "south",
    "east",
    "west",
    "its",
    "his",
    "her",
    "their",
    "all",
    "other",
    "persons",
    "person",
    "unknown",
    "agency",
    "authority",
    "commission",
    "office",
    "school",
    "university",
    "hospital",
    "medical",
    "center",
    "health",
    "first",
    "bd",
    "dept",
    "cnty",
    "assn",
    "commr",
    "sec",
    "secy",
    "gov",
    "govt",
    "twp",
    "natl",
    "intl",
    "ins",
    "servs",
    "sys",
    "grp",
    "univ",
    "hosp",
    "med",
    "ctr",
    "auth",
    "commn",
    "ofc",
];

/// Bluebook abbreviations (tables T6 and T10) and their words, so `Marine Servs.` and
/// `Marine Services` compare equal.
const ABBREVIATIONS: &[(&str, &str)] = &[
    ("admin", "administration"),
    ("admr", "administrator"),
    ("agric", "agricultural"),
    ("ams", "americas"),
    ("assn", "association"),
    ("assocs", "associates"),
    ("atl", "atlantic"),
    ("auth", "authority"),
    ("auto", "automobile"),
    ("ave", "avenue"),
    ("bd", "board"),
    ("bhd", "brotherhood"),
    ("bldg", "building"),
    ("bros", "brothers"),
    ("bus", "business"),
    ("cas", "casualty"),
    ("cent", "central"),
    ("chem", "chemical"),
    ("cmty", "community"),
    ("cnty", "county"),
    ("commc", "communication"),
    ("commcns", "communications"),
    ("commn", "commission"),
    ("commr", "commissioner"),
    ("constr", "construction"),
    ("contl", "continental"),
    ("coop", "cooperative"),
    ("corp", "corporation"),
    ("corr", "correction"),
    ("ctr", "center"),
    ("def", "defense"),
    ("dept", "department"),
    ("dev", "development"),
    ("dir", "director"),
    ("dist", "district"),
    ("distrib", "distribution"),
    ("div", "division"),
    ("econ", "economic"),
    ("educ", "education"),
    ("elec", "electric"),
    ("emps", "employees"),
    ("engg", "engineering"),
    ("enters", "enterprises"),
    ("entmt", "entertainment"),
    ("envtl", "environmental"),
    ("equip", "equipment"),
    ("exch", "exchange"),
    ("fed", "federal"),
    ("fid", "fidelity"),
    ("fin", "financial"),
    ("found", "foundation"),
    ("gen", "general"),
    ("govt", "government"),
    ("grp", "group"),
    ("guar", "guaranty"),
    ("hosp", "hospital"),
    ("hous", "housing"),
    ("indem", "indemnity"),
    ("indep", "independent"),
    ("indus", "industries"),
    ("info", "information"),
    ("ins", "insurance"),
    ("inst", "institute"),
    ("intl", "international"),
    ("invs", "investments"),
    ("lab", "laboratory"),
    ("liab", "liability"),
    ("ltd", "limited"),
    ("mach", "machinery"),
    ("maint", "maintenance"),
    ("mgmt", "management"),
    ("med", "medical"),
    ("mfg", "manufacturing"),
    ("mfrs", "manufacturers"),
    ("mktg", "marketing"),
    ("mkts", "markets"),
    ("mortg", "mortgage"),
    ("mun", "municipal"),
    ("mut", "mutual"),
    ("natl", "national"),
    ("ne", "northeast"),
    ("nw", "northwest"),
    ("org", "organization"),
    ("pac", "pacific"),
    ("pharm", "pharmaceutical"),
    ("prod", "production"),
    ("prods", "products"),
    ("prop", "property"),
    ("prot", "protection"),
    ("pub", "public"),
    ("rr", "railroad"),
    ("ry", "railway"),
    ("regl", "regional"),
    ("res", "resources"),
    ("rest", "restaurant"),
    ("ret", "retirement"),
    ("sav", "savings"),
    ("sch", "school"),
    ("schs", "schools"),
    ("sci", "science"),
    ("sec", "securities"),
    ("secy", "secretary"),
    ("servs", "services"),
    ("socy", "society"),
    ("sw", "southwest"),
    ("se", "southeast"),
    ("sys", "systems"),
    ("tech", "technology"),
    ("tel", "telephone"),
    ("telecomm", "telecommunication"),
    ("transp", "transportation"),
    ("twp", "township"),
    ("univ", "university"),
    ("util", "utility"),
    ("utils", "utilities"),
];

/// The words of a name, lower-cased, apostrophes and periods dropped (`Nat'l` → `natl`),
/// abbreviations written out.
fn words(name: &str) -> Vec<String> {
    name.split(|c: char| !(c.is_alphanumeric() || matches!(c, '\'' | '’' | '.')))
        .map(|w| {
            w.chars()
                .filter(|c| c.is_alphanumeric())
                .flat_map(char::to_lowercase)
                .collect::<String>()
        })
        .filter(|w| !w.is_empty())
        .map(|w| {
            ABBREVIATIONS
                .iter()
                .find(|(a, _)| *a == w)
                .map_or(w, |(_, full)| (*full).to_string())
        })
        .collect()
}

/// The words that tell a party from another: not generic, not a number, two letters or more.
fn distinctive(name: &str) -> Vec<String> {
    words(name)
        .into_iter()
        .filter(|w| {
            w.chars().count() >= 2
                && !w.chars().all(|c| c.is_ascii_digit())
                && !GENERIC.contains(&w.as_str())
        })
        .collect()
}

/// Whether two words are one, allowing for an abbreviation (`Celotex` → `Celo`) and a letter
/// misread by OCR (`Unitcd`, `Catrctt`).
fn same_word(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if short.len() >= 4 && long.starts_with(short) {
        return true;
    }
    let (x, y): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let most = match x.len().min(y.len()) {
        0..=4 => 0,
        5..=8 => 1,
        _ => 2,
    };
    most > 0 && x.len().abs_diff(y.len()) <= most && edit_distance(&x, &y) <= most
}

fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Whether the name a draft gives can be the case a source's caption names: some word that
/// tells the draft's parties apart is in the caption. A name with no such word (`People v.
/// State`) is never held against a caption.
pub fn may_be(draft_name: &str, caption: &str) -> bool {
    let ours = distinctive(draft_name);
    if ours.is_empty() {
        return true;
    }
    let mut theirs = words(caption);
    // `Wal-Mart` and `Walmart`, `Mc Donald` and `McDonald`: neighbours joined count too.
    let joined: Vec<String> = theirs
        .windows(2)
        .map(|p| format!("{}{}", p[0], p[1]))
        .collect();
    theirs.extend(joined);
    ours.iter().any(|w| theirs.iter().any(|t| same_word(w, t)))
}

/// Where the parties of a name are split: ` v. `, ` v `, ` vs. `, ` vs `.
fn versus(s: &str) -> Option<(usize, usize)> {
    [" v. ", " V. ", " vs. ", " v ", " vs ", " VS. ", " V "]
        .iter()
        .filter_map(|sep| s.rfind(sep).map(|i| (i, i + sep.len())))
        .max_by_key(|(i, _)| *i)
}

/// The case name a draft writes just before a citation starting at `start` (`See Celotex
/// Corp. v. Catrett, 477 U.S. 317` → `Celotex Corp. v. Catrett`; `In re Rimsat, Ltd., 212
/// F.3d 1039` → `In re Rimsat, Ltd.`); `None` when the citation follows no name (a parallel
/// citation, a string cite's bare citation, a name in running text).
pub fn name_before(text: &str, start: usize) -> Option<String> {
    let mut from = start.saturating_sub(240);
    while !text.is_char_boundary(from) {
        from += 1;
    }
    let before = &text[from..start];
    let b = before.trim_end();
    let mut b = b.strip_suffix(',')?.trim_end();
    // A docket number between the name and a database citation (`Acme v. Beta, No.
    // 18-cv-1234, 2019 WL 4639462`) is the case's, not its name.
    if let Some((name, docket)) = b.rsplit_once(", ") {
        if is_docket(docket) {
            b = name.trim_end();
        }
    }
    // A name ends a paragraph or sentence before it at most.
    let b = match b.rfind(['\n', ';', '(', ')']) {
        Some(i) => &b[i + 1..],
        None => b,
    };
    let party_word = |w: &str| {
        w.chars()
            .next()
            .is_some_and(|c| c.is_uppercase() || c.is_ascii_digit())
            || JOINERS.contains(&w.to_lowercase().as_str())
            || w.starts_with(['\'', '’', '&'])
    };
    let lead = |name: &str| -> Option<String> {
        // A name in running text (`the court in Roe v. Doe held`) is no case name before a
        // citation: every word after the first party is a party's.
        Some(name.trim().to_string()).filter(|n| !n.is_empty())
    };
    if let Some((v, after)) = versus(b) {
        let second = b[after..].trim();
        if second.is_empty()
            || second.len() > 160
            || !second.split_whitespace().all(party_word)
            || second.chars().any(|c| c.is_ascii_digit())
        {
            return None;
        }
        let words: Vec<&str> = b[..v].split_whitespace().collect();
        let keep = words
            .iter()
            .rev()
            .take(10)
            .take_while(|w| {
                let bare = w.trim_end_matches(',').to_lowercase();
                !SIGNALS.contains(&bare.as_str()) && party_word(w) && !w.ends_with(':')
            })
            .count();
        if keep == 0 {
            return None;
        }
        return lead(&format!(
            "{} {}",
            words[words.len() - keep..].join(" "),
            &b[v..].trim()
        ));
    }
    for marker in ["In re ", "In Re ", "Matter of ", "Ex parte ", "Estate of "] {
        if let Some(i) = b.rfind(marker) {
            let rest = b[i + marker.len()..].trim();
            if !rest.is_empty()
                && rest.len() <= 160
                && rest.split_whitespace().all(party_word)
                && !rest.chars().any(|c| c.is_ascii_digit())
            {
                return lead(&b[i..]);
            }
        }
    }
    None
}

/// A docket number as a citation gives it: `No. 18-cv-1234`, `Civil Action No. 12-5`.
fn is_docket(s: &str) -> bool {
    let d = s
        .trim()
        .trim_start_matches("Civil Action ")
        .trim_start_matches("Civ. A. ")
        .trim_start_matches("Case ")
        .trim_start_matches("Civ. ")
        .trim_start_matches("Docket ");
    (d.starts_with("No. ") || d.starts_with("Nos. ")) && s.len() <= 60
}

/// The caption an opinion's first page begins with, up to the citation at `cite` (a byte
/// offset into `page`): the name written before the citation on its line (`Ace v. Bay, 150
/// Cal. App. 4th 300`), else the lines above it that name parties. `None` when no line names
/// a case.
pub fn caption(page: &str, cite: usize) -> Option<String> {
    let line_start = page[..cite].rfind('\n').map_or(0, |i| i + 1);
    let lead = page[line_start..cite]
        .trim()
        .trim_end_matches(',')
        .trim_end();
    if !lead.is_empty() {
        // The line is the case's name and citation, nothing else: a sentence that cites a
        // case (`See Doe v. Roe, 1 F.3d 2`) is no caption.
        return name_before(page, cite).filter(|n| {
            lead.strip_prefix(n.as_str()).is_some_and(|rest| {
                let rest = rest.trim_start_matches(',').trim();
                rest.is_empty() || is_docket(rest)
            })
        });
    }
    let lines: Vec<&str> = page[..line_start]
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if lines.iter().any(|l| l.chars().count() > 160) {
        return None;
    }
    let names = |l: &str| {
        versus(l).is_some()
            || [
                "In re ",
                "IN RE ",
                "Matter of ",
                "MATTER OF ",
                "Ex parte ",
                "EX PARTE ",
            ]
            .iter()
            .any(|m| l.contains(m))
            || l.trim() == "v."
            || l.trim() == "v"
    };
    let i = lines.iter().rposition(|l| names(l))?;
    // A caption laid out over lines (`UNITED STATES, Plaintiff,` / `v.` / `ISS MARINE`):
    // the line naming the parties with its neighbours.
    let from = i.saturating_sub(usize::from(lines[i].len() < 60));
    let to = (i + 1 + usize::from(lines[i].len() < 60)).min(lines.len());
    let joined = lines[from..to].join(" ");
    let mut out: String = joined.chars().take(160).collect();
    if joined.chars().count() > 160 {
        out.push('…');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn before(t: &str) -> Option<String> {
        let at = t.rfind(", ").unwrap() + 2;
        name_before(t, at)
    }

    #[test]
    fn the_name_before_a_citation() {
        assert_eq!(
            before("See Celotex Corp. v. Catrett, 477 U.S. 317").as_deref(),
            Some("Celotex Corp. v. Catrett")
        );
        assert_eq!(
            before("The court agreed. See, e.g., Petersen v. Iran Air, 905 F. Supp. 2d 121")
                .as_deref(),
            Some("Petersen v. Iran Air")
        );
        assert_eq!(
            before("as held in In re Rimsat, Ltd., 212 F.3d 1039").as_deref(),
            Some("In re Rimsat, Ltd.")
        );
        assert_eq!(
            before("United States ex rel. Doe v. Acme Nat'l Bank, N.A., 12 F.4th 5").as_deref(),
            Some("United States ex rel. Doe v. Acme Nat'l Bank, N.A.")
        );
        assert_eq!(
            before("Acme Corp. v. Beta LLC, No. 18-cv-1234, 2019 WL 4639462").as_deref(),
            Some("Acme Corp. v. Beta LLC")
        );
        let t = "Roe v. Wade, 410 U.S. 113, 93 S. Ct. 705";
        assert_eq!(name_before(t, t.find("93").unwrap()), None);
        assert_eq!(
            before("the court in Roe v. Wade held that, 410 U.S. 113"),
            None
        );
        let t = "for the reasons in 410 U.S. 113";
        assert_eq!(name_before(t, t.find("410").unwrap()), None);
    }

    #[test]
    fn names_compare_as_courts_abbreviate_them() {
        let cap = "UNITED STATES of America v. ISS MARINE SERVICES, INC.";
        assert!(may_be("United States v. ISS Marine Servs., Inc.", cap));
        assert!(may_be("Unitcd States v. ISS Marinc Services", cap));
        assert!(!may_be("Petersen v. Iran Air", cap));
        assert!(!may_be("United States v. Jones", "United States v. Smith"));
        assert!(
            may_be("People v. State", "Smith v. Jones"),
            "nothing to tell apart"
        );
        assert!(may_be(
            "Celotex Corp. v. Catrett",
            "CELOTEX CORPORATION v. CATRETT, Administratrix"
        ));
        assert!(may_be(
            "Cnty. of Riverside v. McLaughlin",
            "County of Riverside v. McLaughlin"
        ));
        assert!(may_be(
            "In re Rimsat, Ltd.",
            "In the Matter of RIMSAT, LTD., Debtor"
        ));
        assert!(may_be(
            "In re Walmart Stores",
            "In re WAL-MART STORES, INC."
        ));
        assert!(!may_be("In re Zenith Holdings", "In re RIMSAT, LTD."));
    }

    #[test]
    fn a_caption_on_its_line_or_over_lines() {
        let p = "ACE v. BAY\nAce v. Bay, 150 Cal. App. 4th 300 (2005)\n";
        assert_eq!(
            caption(p, p.find("150").unwrap()).as_deref(),
            Some("Ace v. Bay")
        );
        let p = "UNITED STATES OF AMERICA, Plaintiff,\nv.\nISS MARINE SERVICES, INC.\n905 F. Supp. 2d 121 (D.D.C. 2012)\n";
        let c = caption(p, p.find("905").unwrap()).unwrap();
        assert!(
            c.contains("UNITED STATES") && c.contains("ISS MARINE"),
            "{c}"
        );
        assert_eq!(caption("Opinion\n905 F. Supp. 2d 121", 8), None);
        let p = "Page 1.\nThe owner paid. See Doe v. Roe, 11 Cal. App. 4th 101 (2001).";
        assert_eq!(caption(p, p.find("11 Cal").unwrap()), None);
    }
}
