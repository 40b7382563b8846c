//! An index of what the evidence says about the draft's claims, built in one streaming pass:
//! each source file is read, normalised, scanned and dropped, so memory stays near the size
//! of a few files however large the evidence. One thread per core (up to eight) takes files
//! from a shared queue.
//!
//! Only what the draft claims is recorded (its dates, amounts, cases, statutes, quotations),
//! plus every page's Bates stamp; each claim is then one hash lookup.

mod build;
mod check;
mod records;
mod scan;
mod segment;
mod stars;
mod table;
mod transcript;

pub use table::{Index, Wanted};

#[cfg(test)]
mod tests {
    use super::check::pin_within;
    use super::*;
    use crate::evidence::Evidence;
    use crate::needs::Needs;
    use crate::{verify, Status};

    fn evidence() -> Evidence {
        let mut ev = Evidence::new(vec!["SMITH".into()]);
        ev.add_pages(
            "lease.txt".into(),
            vec![
                "The term begins on June 1, 2022. Rent is $2,150.00 per month.\n\"Landlord shall commence repairs within thirty (30) days of written notice.\"\nSee Green v. Superior Court, 10 Cal. 3d 616, 637 (1974); Cal. Civ. Code § 1941.1.\nSMITH000002".into(),
                "The tenant pays 1.5% interest.\nSMITH000003".into(),
            ],
        );
        ev
    }

    fn statuses(draft: &str) -> Vec<(String, Status, Option<String>)> {
        verify(draft, &evidence())
            .outcomes
            .into_iter()
            .map(|o| (o.claim.text, o.status, o.reason))
            .collect()
    }

    #[test]
    fn genuine_claims_are_supported() {
        let draft = "On 6/1/2022 rent was $2,150 (SMITH000002–SMITH000003). The lease says \"[l]andlord shall commence repairs . . . of written notice.\" Green, 10 Cal. 3d 616, 637 (1974). Cal. Civ. Code § 1941.1; 1.5%.";
        for (text, status, why) in statuses(draft) {
            assert_eq!(status, Status::Supported, "{text}: {why:?}");
        }
    }

    #[test]
    fn a_date_cited_to_an_invented_bates_number_is_not_supported() {
        // The date is in the evidence, but the draft cites it to a number no source carries.
        let got = statuses("The term began on June 1, 2022 (RTX 3060).");
        assert_eq!(got.len(), 2, "{got:#?}");
        assert!(
            got.iter().all(|(_, s, _)| *s != Status::Supported),
            "{got:#?}"
        );
        assert_eq!(got[1].0, "RTX 3060", "{got:#?}");
    }

    #[test]
    fn fabrications_are_caught_with_reasons() {
        let draft = "On June 2, 2022 rent was $2,510.00 (SMITH000009). \"Landlord shall commence repairs within ninety days.\" 10 Cal. 3d 616, 640 (1974); 11 Cal. 3d 616; 10 Cal. 3d 616 (1975). Cal. Civ. Code § 1942.4. Paid on time (RTX 3060).";
        let got = statuses(draft);
        assert!(
            got.iter().all(|(_, s, _)| *s == Status::Unsupported),
            "{got:#?}"
        );
        let reasons: Vec<String> = got.iter().filter_map(|g| g.2.clone()).collect();
        assert!(
            reasons.iter().any(|r| r.contains("at 637, not at 640")),
            "{reasons:#?}"
        );
        assert!(
            reasons.iter().any(|r| r.contains("1974, not 1975")),
            "{reasons:#?}"
        );
        assert!(
            reasons
                .iter()
                .any(|r| r.contains("`RTX` is not a Bates prefix")),
            "{reasons:#?}"
        );
        assert!(
            reasons.iter().any(|r| r.contains("opening words")),
            "{reasons:#?}"
        );
    }

    /// Evidence and a draft full of numbers in every form, some claims changed by a digit:
    /// the page filter must give exactly what scanning every page gives.
    #[test]
    fn the_page_filter_changes_no_outcome() {
        // Numbers differ between snippets, so that each page needs its own rule to be read.
        const SNIPPETS: &[&str] = &[
            "$12,345.00",
            "USD 6,495.04",
            "$1.25 million",
            "$0.5 billion",
            "$77700",
            "$ 83.5",
            "US$ 3,000,000.10",
            "12.5%",
            "0.9996%",
            "98.9996 percent",
            "61 percent",
            "January 9, 2014",
            "Jan. 8, 2015",
            "Sept. 15, 2016",
            "6 January 2017",
            "01/07/2018",
            "1/4/24",
            "2019-01-03",
            "this 2nd day of January, 2020",
            "March 31, 1999",
            "Bush v. Gore, 531 U.S. 98, 99-100 (2000)",
            "Doe v. Poe, 123 F.3d 456 (9th Cir. 1997)",
            "531 U.S. at 99",
            "Id. at 100",
            "Bush, supra, at 101",
            "28 U.S.C. § 1332(a)",
            "42 U.S.C. §§ 1983-1985",
            "Cal. Civ. Code § 1942.4",
            "Fed. R. Civ. P. 11(b)(6)",
            "Id.",
            "7 F.3d 123456 (1996)",
            "17 Cal. 4th 1, 5 (1998)",
        ];
        let mut seed = 7u64;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        };
        // Changes one digit of a snippet.
        let alter = |s: &str, r: usize| -> String {
            let digits: Vec<usize> = s
                .match_indices(|c: char| c.is_ascii_digit())
                .map(|(i, _)| i)
                .collect();
            let mut out = s.to_string();
            if let Some(&i) = digits.get(r % digits.len().max(1)) {
                let d = (s.as_bytes()[i] - b'0' + 1 + (r % 8) as u8) % 10;
                out.replace_range(i..=i, &d.to_string());
            }
            out
        };
        let mut ev = Evidence::new(vec!["SMITH".into()]);
        // One snippet a page, so that a page the filter wrongly skips is noticed.
        for f in 0..3 {
            let pages: Vec<String> = (0..40)
                .map(|p| {
                    let s = SNIPPETS[next(SNIPPETS.len())];
                    let s = if next(3) == 0 {
                        alter(s, next(100))
                    } else {
                        s.to_string()
                    };
                    format!("As stated, {s}.\nSMITH{:06}", 500_000 + f * 40 + p)
                })
                .collect();
            ev.add_pages(format!("f{f}.txt"), pages);
        }
        let mut draft = String::new();
        for s in SNIPPETS {
            draft.push_str(&format!(
                "{s}. {}. {}.\n",
                alter(s, next(100)),
                alter(s, next(100))
            ));
        }
        let claims = super::super::claims(&draft, &ev.declared_prefixes);
        let filtered = Wanted::of(&claims);
        let mut everything = Wanted::of(&claims);
        everything.needs = Needs::everything();
        let a = Index::build(&filtered, &ev).check_all(claims.clone());
        let b = Index::build(&everything, &ev).check_all(claims);
        assert!(a.len() > 60, "{}", a.len());
        let supported = a.iter().filter(|o| o.status == Status::Supported).count();
        assert!(
            supported > 20 && supported < a.len(),
            "{supported} of {}",
            a.len()
        );
        assert_eq!(a, b);
    }

    #[test]
    fn pins_inside_a_range_are_supported() {
        assert!(pin_within("99-101", "100"));
        assert!(!pin_within("99-101", "102"));
    }
}
