//! Real filings' forms, hand-written: brief excerpts with captions, counsel blocks, citations
//! in every form a court writes them, record cites and the filing's own dates, each with
//! planted fabrications (labelled `planted`) beside genuine claims, verified against small
//! sources. Every fabrication must be blocked, nothing genuine blocked, and no caption,
//! address or docket number may be a claim at all.

use lexrun::verify::{self, Evidence, Verification};

/// Verifies `draft` against sources given as (file name, pages).
fn check(draft: &str, sources: &[(&str, &[&str])], prefixes: &[&str]) -> Verification {
    let mut ev = Evidence::new(prefixes.iter().map(|p| p.to_string()).collect());
    for (name, pages) in sources {
        ev.add_pages(
            name.to_string(),
            pages.iter().map(|p| p.to_string()).collect(),
        );
    }
    verify::verify(draft, &ev)
}

fn fold(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every outcome as `kind<TAB>text<TAB>status`, in draft order.
fn outcomes(v: &Verification) -> Vec<String> {
    v.outcomes
        .iter()
        .map(|o| {
            format!(
                "{}\t{}\t{}",
                o.claim.kind.as_str(),
                fold(&o.claim.text),
                o.status.as_str()
            )
        })
        .collect()
}

/// The status of the one outcome whose text is `text` (the `n`th, counting from 0, if several).
fn status_of(v: &Verification, text: &str, n: usize) -> String {
    let all = outcomes(v);
    v.outcomes
        .iter()
        .filter(|o| fold(&o.claim.text) == text)
        .nth(n)
        .map(|o| o.status.as_str().to_string())
        .unwrap_or_else(|| format!("no claim `{text}` (#{n}) among {all:#?}"))
}

/// A brief citing English reports and an invented case in a reporter no catalogue knows:
/// both are claims, and their short forms, `supra` and `Id.` follow them rather than the
/// American authority cited before.
#[test]
fn citations_in_reporters_no_catalogue_knows_are_unrecognized_with_their_short_forms() {
    let draft = "\
Ann Lee (SBN 123456)
LEE & PARK LLP
1939 Harrison Street, Suite 420
Oakland, CA 94612

Case No. 3:24-cv-02731-VC

ARGUMENT

Summary judgment is proper where no fact is in dispute. Celotex Corp. v. Catrett, 477 U.S. 317, 322 (1986). \
Damages for breach are limited to those the parties foresaw. Hadley v. Baxendale, 156 Eng. Rep. 145 (1854). \
Id. at 151. The rule is settled. 156 Eng. Rep. at 151. \
A carrier is liable for the whole loss. Smithers v. Coalport Mills, 88 Eng. Rep. 412, 414 (K.B. 1771). \
Smithers, supra, at 415. The same was held in In re Calder Shipping, 12 Lloyd Rep 77 (1902), \
and in Marsh v. Quill, 9 Exch 341 (1853). Id. at 344. Again, Celotex, supra.
";
    let source =
        "The Supreme Court held in Celotex Corp. v. Catrett, 477 U.S. 317 (1986), that ...";
    let v = check(draft, &[("opinion.txt", &[source])], &[]);
    let got = outcomes(&v);
    let want = [
        "citation\t477 U.S. 317, 322 (1986)\tsupported",
        // Genuine but uncheckable: in no catalogue, so never passed silently.
        "citation\t156 Eng. Rep. 145\tunrecognized",
        "citation\tId. at 151\tunrecognized",
        "citation\t156 Eng. Rep. at 151\tunrecognized",
        // planted: an invented case, its supra and pin cite.
        "citation\t88 Eng. Rep. 412\tunrecognized",
        "citation\tSmithers, supra, at 415\tunrecognized",
        // planted: a reporter written without periods, in the full case form.
        "citation\t12 Lloyd Rep 77\tunrecognized",
        "citation\t9 Exch 341\tunrecognized",
        "citation\tId. at 344\tunrecognized",
        "citation\tCelotex, supra\tsupported",
    ];
    assert_eq!(got, want, "{got:#?}");
}

/// `supra` in the forms courts write it: at a sentence's end, with a volume, with a
/// parenthetical, across a line; with nothing before it of that name it is unresolved.
#[test]
fn supra_short_forms_resolve_or_are_blocked() {
    let draft = "\
The moving party bears the burden. Celotex Corp. v. Catrett, 477 U.S. 317 (1986). As held in Celotex, supra. \
See also Celotex, 477 U.S., supra, at 323. Celotex, supra (burden),\nand Celotex, supra,\nat 324. \
But Matsushita, supra, at 587, is cited to nothing before it.
";
    let source = "Celotex Corp. v. Catrett, 477 U.S. 317 (1986).";
    let v = check(draft, &[("opinion.txt", &[source])], &[]);
    let got = outcomes(&v);
    assert_eq!(got[0], "citation\t477 U.S. 317 (1986)\tsupported");
    assert_eq!(status_of(&v, "Celotex, supra", 0), "supported", "{got:#?}");
    assert_eq!(
        status_of(&v, "Celotex, 477 U.S., supra, at 323", 0),
        "supported",
        "{got:#?}"
    );
    assert_eq!(status_of(&v, "Celotex, supra", 1), "supported", "{got:#?}");
    assert_eq!(status_of(&v, "Celotex, supra, at 324", 0), "supported");
    // planted: a supra with no full citation before it.
    assert_eq!(status_of(&v, "Matsushita, supra, at 587", 0), "unsupported");
}

/// Statutes and rules match across typography: spacing and periods inside the name, `§`,
/// `Section`, `sec.`, `pt.` and `Part`, `et seq.`, subsections in parentheses; court rules,
/// administrative codes and the states' own abbreviations are statutes, checked like any.
#[test]
fn statutes_and_rules_match_as_the_law_is_printed() {
    let source = "\
Summary judgment is governed by Fed.R.Civ.P. 56(a), and the brief's length by FRAP 32(a)(7).
Hazardous wastes are listed in 40 C.F.R. Part 261. A claim lies under 42 U.S.C. Section 1983 et seq.
The regulations at 907 KAR 1:604 and 22 NYCRR 202.8 apply, as do R.C. 2305.10, ORS 90.320 and
RCW 59.18.060. Fees are available under 42 U.S.C. sec. 1988(b).";
    let draft = "\
Summary judgment is proper under Fed. R. Civ. P. 56(a). The brief complies with Fed. R. App. P. 32(a)(7). \
The waste is listed in 40 C.F.R. pt. 261. The claim arises under 42 U.S.C. §§ 1983 et seq., and fees under \
42 U.S.C. § 1988(b). Kentucky's rule is 907 KAR 1:604; New York's is 22 NYCRR 202.8; Ohio's R.C. 2305.10; \
Oregon's ORS 90.320; Washington's RCW 59.18.060.
Planted: Fed. R. Civ. P. 57(c); 40 C.F.R. pt. 262; ORS 90.999; RCW 59.18.999; 907 KAR 9:999.
";
    let v = check(draft, &[("rules.txt", &[source])], &[]);
    let got = outcomes(&v);
    let want = [
        "statute\tFed. R. Civ. P. 56(a)\tsupported",
        "statute\tFed. R. App. P. 32(a)(7)\tsupported",
        "statute\t40 C.F.R. pt. 261\tsupported",
        "statute\t42 U.S.C. §§ 1983\tsupported",
        "statute\t42 U.S.C. § 1988(b)\tsupported",
        "statute\t907 KAR 1:604\tsupported",
        "statute\t22 NYCRR 202.8\tsupported",
        "statute\tR.C. 2305.10\tsupported",
        "statute\tORS 90.320\tsupported",
        "statute\tRCW 59.18.060\tsupported",
        "statute\tFed. R. Civ. P. 57(c)\tunsupported",
        "statute\t40 C.F.R. pt. 262\tunsupported",
        "statute\tORS 90.999\tunsupported",
        "statute\tRCW 59.18.999\tunsupported",
        "statute\t907 KAR 9:999\tunsupported",
    ];
    assert_eq!(got, want, "{got:#?}");
}

/// Amounts and dates as receipts and ledgers print them: a sum without its sign, the currency
/// after the number, thousands written `k`, a month and year.
#[test]
fn amounts_and_months_as_records_print_them() {
    let receipt = "\
HARBOR HARDWARE — RECEIPT
Date: 03/05/2024
Replacement valve        412.50
Wire transfer received: 5000 USD
Deposit held: $12,000.00";
    let draft = "\
Plaintiff paid $412.50 for the valve and wired USD 5,000, that is $5,000, in March 2024; the deposit was $12k.
Planted: she paid $412.05, wired $6k, and did so in April 2024.
";
    let v = check(draft, &[("receipt.txt", &[receipt])], &[]);
    let got = outcomes(&v);
    let want = [
        "amount\t$412.50\tsupported",
        "amount\tUSD 5,000\tsupported",
        "amount\t$5,000\tsupported",
        "date\tMarch 2024\tsupported",
        "amount\t$12k\tsupported",
        "amount\t$412.05\tunsupported",
        "amount\t$6k\tunsupported",
        "date\tApril 2024\tunsupported",
    ];
    assert_eq!(got, want, "{got:#?}");
}

/// The filing's own dates — its signature, its certificate of service, a notary's commission
/// — are the document's, not facts to check; a date in its body still is one.
#[test]
fn the_filings_own_dates_are_listed_as_its_own() {
    let draft = "\
STATEMENT OF FACTS

The lease is dated January 5, 2024. Planted: rent rose on February 1, 2024.

Dated: May 1, 2024
/s/ Ann Lee

Subscribed and sworn to before me on May 1, 2024.
Notary Public. My commission expires: June 30, 2027

CERTIFICATE OF SERVICE

I certify that on May 2, 2024, I served the foregoing on all counsel by e-mail.
";
    let lease = "RESIDENTIAL LEASE, made January 5, 2024, between the parties.";
    let v = check(draft, &[("lease.txt", &[lease])], &[]);
    let got = outcomes(&v);
    assert_eq!(
        got,
        [
            "date\tJanuary 5, 2024\tsupported",
            "date\tFebruary 1, 2024\tunsupported"
        ],
        "{got:#?}"
    );
    let own: Vec<String> = v.document_dates.iter().map(|c| fold(&c.text)).collect();
    assert_eq!(
        own,
        ["May 1, 2024", "May 1, 2024", "June 30, 2027", "May 2, 2024"]
    );
}

const COMPLAINT: &str = "\
UNITED STATES DISTRICT COURT
NORTHERN DISTRICT OF CALIFORNIA

MARIA GOMEZ, Plaintiff,
v.
HARBOR LOGISTICS, INC., Defendant.

Case No. 3:24-cv-02731-VC

COMPLAINT FOR DAMAGES

1. Plaintiff Maria Gomez worked at Harbor's Oakland warehouse.
2. Harbor hired her on March 4, 2021 and paid her $22.50 an hour.
3. Harbor never paid a meal-period premium.";

const COMPLAINT_PAGE_2: &str = "\
4. Gomez complained in writing on June 1, 2023.
5. Harbor dismissed her on June 30, 2023.
PRAYER FOR RELIEF
1. Damages according to proof.";

const LEE_DECLARATION: &str = "\
DECLARATION OF ANN LEE IN SUPPORT OF PLAINTIFF'S MOTION

I, Ann Lee, declare:
1. I am Harbor's payroll manager.
2. Harbor paid Gomez $1,250.00 in overtime in 2022.";

/// Record cites checked where the record is among the sources: the complaint by its title,
/// a declaration by its declarant; the facts a cite binds must be on its paragraph's pages,
/// and a paragraph the filing does not have is no support. A filing not among the sources,
/// or named ambiguously, stays unchecked.
#[test]
fn record_cites_are_checked_against_the_record_among_the_sources() {
    let draft = "\
STATEMENT OF FACTS

Harbor hired Gomez on March 4, 2021. (Compl. ¶ 2.) She complained on June 1, 2023 (Compl. ¶ 4), \
and was dismissed on June 30, 2023. (Id. ¶ 5.) Harbor paid her $1,250.00 in overtime. (Decl. of Ann Lee ¶ 2.) \
Planted: she was paid $24.00 an hour (Compl. ¶ 2); Harbor dismissed her on June 30, 2023 (Compl. ¶ 3); \
Harbor admitted the violation (Compl. ¶ 41); Lee confirmed it (Lee Decl. ¶ 9). \
Her manager agreed. (Ruiz Dep. 45:12-18.) The amended pleading says so too. (First Am. Compl. ¶ 2.)
";
    let v = check(
        draft,
        &[
            ("record/complaint.txt", &[COMPLAINT, COMPLAINT_PAGE_2]),
            ("record/lee.txt", &[LEE_DECLARATION]),
        ],
        &[],
    );
    let got = outcomes(&v);
    let want = [
        "date\tMarch 4, 2021\tsupported",
        "record\tCompl. ¶ 2\tsupported",
        "date\tJune 1, 2023\tsupported",
        "record\tCompl. ¶ 4\tsupported",
        "date\tJune 30, 2023\tsupported",
        "record\tId. ¶ 5\tsupported",
        "amount\t$1,250.00\tsupported",
        "record\tDecl. of Ann Lee ¶ 2\tsupported",
        // planted: a fact its paragraph does not give, a fact from another paragraph, and
        // paragraphs the filings do not have.
        "amount\t$24.00\tunsupported",
        "record\tCompl. ¶ 2\tsupported",
        "date\tJune 30, 2023\tmiscited",
        "record\tCompl. ¶ 3\tsupported",
        "record\tCompl. ¶ 41\tunsupported",
        "record\tLee Decl. ¶ 9\tunsupported",
    ];
    assert_eq!(got, want, "{got:#?}");
    let unchecked: Vec<String> = v.unchecked.iter().map(|(c, _)| fold(&c.text)).collect();
    assert_eq!(
        unchecked,
        ["Ruiz Dep. 45:12-18", "First Am. Compl. ¶ 2"],
        "not among the sources: listed, never supported"
    );
}

/// An exhibit and the Bates number that pins it are one cite; a shortened Bates range covers
/// every page in it.
#[test]
fn exhibits_pinned_by_bates_numbers_and_shortened_ranges() {
    let pages: Vec<String> = (14..=20)
        .map(|n| {
            let body = match n {
                14 => "Invoice dated April 2, 2024 for $3,400.00.",
                19 => "Payment of $3,400.00 received May 1, 2024.",
                _ => "Shipping records.",
            };
            format!("{body}\nACME {n:06}")
        })
        .collect();
    let pages: Vec<&str> = pages.iter().map(String::as_str).collect();
    let draft = "\
Acme invoiced $3,400.00 on April 2, 2024 (Ex. C, ACME 000014) and was paid May 1, 2024 \
(ACME 000014–19). See also Ex. 3 at ACME-000016. \
Planted: Acme was paid on May 3, 2024 (ACME 000014–000018), and cites Ex. D, ACME 000099.
";
    let v = check(draft, &[("production.txt", &pages)], &["ACME"]);
    let got = outcomes(&v);
    let want = [
        "amount\t$3,400.00\tsupported",
        "date\tApril 2, 2024\tsupported",
        "bates\tEx. C, ACME 000014\tsupported",
        "date\tMay 1, 2024\tsupported",
        "bates\tACME 000014–19\tsupported",
        "bates\tEx. 3 at ACME-000016\tsupported",
        "date\tMay 3, 2024\tunsupported",
        "bates\tACME 000014–000018\tsupported",
        "bates\tEx. D, ACME 000099\tunsupported",
    ];
    assert_eq!(got, want, "{got:#?}");
}
