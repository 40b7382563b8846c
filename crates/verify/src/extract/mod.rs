//! Finding checkable claims in text: case citations (full, short, `Id.`, `supra`), statutes
//! and rules, dates, Bates numbers and ranges, quotations, and money amounts and percentages.
//! The same extractors read the evidence, so both sides are compared in one canonical form.

mod cases;
mod facts;
mod pattern;
mod quotes;
mod record;
mod statutes;

pub use cases::citations;
pub use facts::{amounts, bates, dates, evidence_amounts, exhibits, yearless_dates};
pub(crate) use pattern::re;
pub use quotes::quotes;
pub use record::records;
pub use statutes::statutes_and_ids;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cites::Allowed;
    use crate::{Claim, Key};

    fn keys(v: Vec<Claim>) -> Vec<String> {
        v.into_iter().map(|c| format!("{}", c.key)).collect()
    }

    #[test]
    fn full_citations_in_all_spacings() {
        let t = "See Bush v. Gore, 531 U.S. 98, 99-100 (2000); Doe v. Roe, 123 F. 3d 456 (9th Cir. 1999); 12 F.Supp.2d 34; 7 F. App’x 9.";
        assert_eq!(
            keys(citations(t, &Allowed::default())),
            vec![
                "531 us 98, 99-100 (2000)",
                "123 f3d 456 (1999)",
                "12 fsupp2d 34",
                "7 fappx 9"
            ]
        );
    }

    #[test]
    fn citation_split_across_lines() {
        let t = "Anderson v. Liberty Lobby, Inc., 477\nU.S. 242, 248\n(1986).";
        assert_eq!(
            keys(citations(t, &Allowed::default())),
            vec!["477 us 242, 248 (1986)"]
        );
    }

    #[test]
    fn short_forms_resolve_to_their_full_citation() {
        let t = "Celotex Corp. v. Catrett, 477 U.S. 317 (1986). Later: 477 U.S. at 322. Again, Celotex, supra, at 323. Id. at 324.";
        let c = citations(t, &Allowed::default());
        let s = statutes_and_ids(t, &c);
        assert_eq!(
            keys(c),
            vec![
                "477 us 317 (1986)",
                "477 us 317, 322 (1986)",
                "477 us 317, 323 (1986)"
            ]
        );
        assert_eq!(keys(s), vec!["477 us 317, 324 (1986)"]);
        assert!(matches!(
            citations("999 U.S. at 5", &Allowed::default())[0].key,
            Key::Unresolved(_)
        ));
        assert!(matches!(
            citations("Nobody, supra, at 5", &Allowed::default())[0].key,
            Key::Unresolved(_)
        ));
    }

    #[test]
    fn statutes_rules_and_id_after_a_statute() {
        let t = "Under 28 U.S.C. § 1332(a) and 42 U.S.C. §§ 1983-1985, 29 C.F.R. § 1910.1000, Cal. Civ. Code § 1942.4, Fed. R. Civ. P. 12(b)(6) and Fed. R. Evid. 803(6). Id.";
        let s = statutes_and_ids(t, &[]);
        assert_eq!(
            keys(s),
            vec![
                "28usc § 1332(a)",
                "42usc § 1983-1985",
                "29cfr § 1910.1000",
                "calcivcode § 1942.4",
                "fedrcivp § 12(b)(6)",
                "fedrevid § 803(6)",
                "fedrevid § 803(6)",
            ]
        );
    }

    #[test]
    fn a_month_ending_a_sentence_before_a_numbered_paragraph_is_no_date() {
        let text = "through February and March. 2. On March 3, 2024 I wrote. On Mar. 5 I called.";
        let found: Vec<String> = yearless_dates(text, &dates(text), &[])
            .iter()
            .map(|c| c.text.clone())
            .collect();
        assert_eq!(found, ["Mar. 5"]);
    }

    #[test]
    fn a_codes_edition_year_is_not_its_section() {
        let k = |t: &str| keys(statutes_and_ids(t, &[]));
        // The Code's 1940 edition, then its section.
        assert_eq!(
            k("(Title 26 U. S. Code, 1940 Ed., § 811 (j)) provides"),
            vec!["26usc § 811"]
        );
        assert_eq!(k("26 U.S.C. 1940 ed. § 23(a)"), vec!["26usc § 23(a)"]);
        // The edition as a whole is no section's claim.
        assert!(k("the 1940 edition of 26 U.S. Code, 1940 Ed., is cited").is_empty());
        // A section with no edition is unchanged.
        assert_eq!(k("26 U.S. Code 1940"), vec!["26usc § 1940"]);
    }

    #[test]
    fn statutes_in_every_typography_key_alike() {
        let k = |t: &str| keys(statutes_and_ids(t, &[]));
        assert_eq!(k("Fed.R.Civ.P. 56(a)"), k("Fed. R. Civ. P. 56(a)"));
        assert_eq!(k("Fed.R.Civ.P. 56(a)"), vec!["fedrcivp § 56(a)"]);
        assert_eq!(k("40 C.F.R. Part 261"), k("40 C.F.R. pt. 261"));
        assert_eq!(k("40 C.F.R. Part 261, § 261.4"), vec!["40cfrpt261 § 261.4"]);
        assert_eq!(k("42 U.S.C. Section 1983"), k("42 U.S.C. § 1983"));
        assert_eq!(
            k("42 U.S.C. sec. 1983 et seq."),
            k("42 U.S.C. §§ 1983 et seq.")
        );
        assert_eq!(k("FRAP 32(a)(7)"), k("Fed. R. App. P. 32(a)(7)"));
    }

    #[test]
    fn every_date_form_and_not_citation_years() {
        let t = "January 5, 2024; Jan. 5, 2024; Sept. 5, 2024; 5 January 2024; 01/05/2024; 2024-01-05; this 5th day of January, 2024. Bush v. Gore, 531 U.S. 98 (2000). February 30, 2024.";
        let d = keys(dates(t));
        assert_eq!(
            d,
            vec![
                "2024-01-05",
                "2024-01-05",
                "2024-09-05",
                "2024-01-05",
                "2024-01-05",
                "2024-01-05",
                "2024-01-05"
            ]
        );
    }

    #[test]
    fn bates_numbers_ranges_and_inventions() {
        let p = vec!["SMITH".to_string()];
        let t = "See SMITH000123–SMITH000130, SMITH 000140 and (RTX 3060). Oakland, CA 94612.";
        let b = bates(t, &p, &[]);
        let k = keys(b);
        assert_eq!(k[0], "SMITH000123–SMITH000130");
        assert_eq!(k[1], "SMITH000140");
        assert!(k[2].contains("`RTX` is not a Bates prefix"), "{k:?}");
        assert_eq!(k.len(), 3, "the ZIP code is not a Bates number: {k:?}");
    }

    #[test]
    fn undeclared_prefixes_only_where_a_bates_number_can_be() {
        let p = vec!["SMITH".to_string()];
        // A production number's shape, or a record cite's place: claims.
        for t in [
            "produced as ACME0001234.",
            "see ACME-000123 and",
            "paid (RTX 3060).",
            "paid (See RTX 3060; SMITH000001).",
        ] {
            assert_eq!(
                bates(t, &p, &[]).len(),
                1 + usize::from(t.contains("SMITH")),
                "{t}"
            );
        }
        // Statutes, dockets, case numbers, bills, running text: none.
        for t in [
            "KRS 117.235(3)(c) and (KRS 424.290).",
            "RCW 59.18.060; ORS 90.320",
            "No. 5:24-CV-481-FL; Case No. 20-CV-02731-VC",
            "No. ED108783, No. ED 83155, No. 1711-CC00064",
            "Citation Nr: A25084404",
            "SB 683 imposes; (HB 588); Senate Bill SB 12",
            "AMERICAN CIVIL LIBERTIES UNION FOUNDATION OF SOUTHERN CALIFORNIA 1313 West Eighth",
            "an RTX 3060 card",
            "Ann Lee (SBN 123456)",
        ] {
            let b = bates(t, &p, &[]);
            assert!(b.is_empty(), "{t}: {:?}", keys(b));
        }
    }

    #[test]
    fn amounts_and_percentages() {
        let t = "$12,500.00, USD 12,500, $ 3,875, 12.5%, $1.2 million and 8 percent";
        assert_eq!(
            keys(amounts(t)),
            vec![
                "$12500.00",
                "$12500.00",
                "$3875.00",
                "12.5%",
                "$1200000.00",
                "8%"
            ]
        );
    }

    #[test]
    fn sums_without_a_sign_currency_after_and_thousands_as_k() {
        assert_eq!(
            keys(amounts("$5k, $1.2M, 5000 USD, 5,000 dollars, $5 kits")),
            vec!["$5000.00", "$1200000.00", "$5000.00", "$5000.00", "$5.00"]
        );
        let ev = |t: &str| keys(evidence_amounts(t));
        assert_eq!(
            ev("Total 412.50\nTax 1,250.00"),
            vec!["$412.50", "$1250.00"]
        );
        for t in [
            "§ 1910.10",
            "version 2.10.3",
            "Rule 12.05",
            "12.50.1",
            "v1.20",
        ] {
            assert!(ev(t).is_empty(), "{t}: {:?}", ev(t));
        }
    }

    #[test]
    fn months_as_a_whole_are_dates() {
        assert_eq!(
            keys(dates("in March 2024, by Sept. 2023, on March 5, 2024")),
            vec!["2024-03", "2023-09", "2024-03-05"]
        );
    }

    #[test]
    fn quotations_straight_curly_and_block() {
        let t = "He wrote “Landlord shall repair” and \"one\" and \"two words\".\n\n> Block quoted\n> text here.\n";
        let q: Vec<String> = quotes(t)
            .into_iter()
            .map(|c| format!("{}", c.key))
            .collect();
        assert_eq!(
            q,
            vec![
                "Landlord shall repair",
                "two words",
                "Block quoted text here."
            ]
        );
    }

    #[test]
    fn quotation_marks_pair_as_written() {
        // An opening mark followed by another opening mark starts nothing; an unclosed
        // quotation is no claim.
        let t = "“stray “two words” then \"three more words\" and “never closed";
        let spans: Vec<&str> = quotes(t).iter().map(|c| &t[c.start..c.end]).collect();
        assert_eq!(spans, vec!["“two words”", "\"three more words\""]);
        let long = format!("\"{} end\"", "word ".repeat(900));
        assert!(
            quotes(&long).is_empty(),
            "over 4,000 characters is no quotation"
        );
        let fits = format!("\"{} end\"", "word ".repeat(700));
        assert_eq!(quotes(&fits).len(), 1);
    }
}
