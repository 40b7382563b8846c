//! A model's structured answer as the plain lines a verifier reads.

use serde_json::Value;

/// Fields in which a reviewer's record says its verdict (`passes: true`).
const VERDICTS: &[&str] = &[
    "passes",
    "pass",
    "passed",
    "ok",
    "approved",
    "acceptable",
    "accepted",
    "valid",
    "sound",
];
/// Fields in which a reviewer's record lists what is wrong (`objections: [...]`).
const COMPLAINTS: &[&str] = &[
    "objections",
    "objection",
    "problems",
    "issues",
    "errors",
    "defects",
    "concerns",
    "deficiencies",
    "flaws",
    "unsupported",
];

/// A record answer that contradicts itself — a verdict field true while a list of objections
/// holds something — read as not passing: each such verdict field set to false. Why, when
/// it was (the answer is left as it is otherwise).
pub(super) fn settle_contradiction(answer: &mut Value) -> Option<String> {
    let Value::Object(m) = answer else {
        return None;
    };
    let complaints: Vec<(String, usize)> = m
        .iter()
        .filter(|(k, _)| COMPLAINTS.contains(&k.to_ascii_lowercase().as_str()))
        .filter_map(|(k, v)| {
            let n = v.as_array()?.iter().filter(|x| !is_blank(x)).count();
            (n > 0).then(|| (k.clone(), n))
        })
        .collect();
    if complaints.is_empty() {
        return None;
    }
    let verdicts: Vec<String> = m
        .iter()
        .filter(|(k, v)| {
            VERDICTS.contains(&k.to_ascii_lowercase().as_str()) && v.as_bool() == Some(true)
        })
        .map(|(k, _)| k.clone())
        .collect();
    if verdicts.is_empty() {
        return None;
    }
    for k in &verdicts {
        m.insert(k.clone(), Value::Bool(false));
    }
    let listed: Vec<String> = complaints
        .iter()
        .map(|(k, n)| format!("{n} in `{k}`"))
        .collect();
    Some(format!(
        "the answer contradicts itself: it says {} but lists {}; read as {} (a review that passes lists nothing against the text)",
        verdicts
            .iter()
            .map(|k| format!("`{k}: true`"))
            .collect::<Vec<_>>()
            .join(" and "),
        listed.join(" and "),
        verdicts
            .iter()
            .map(|k| format!("`{k}: false`"))
            .collect::<Vec<_>>()
            .join(" and ")
    ))
}

/// An empty string or null in a list: nothing said.
fn is_blank(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        _ => false,
    }
}

/// A structured answer as lines a verifier reads: `field: value`, one per value, strings
/// unquoted; a number under a money-like key (amount, total, price, paid, due, balance) is
/// written as dollars so that the amount rules apply to it.
pub(super) fn flatten_answer(v: &Value) -> String {
    fn walk(v: &Value, key: &str, out: &mut String) {
        match v {
            // Each object is a paragraph of its own, its page cites (`bates`, `exhibit`)
            // last, so that they cite that object's facts and no other's.
            Value::Object(m) => {
                let is_cite = |k: &str| {
                    let k = k.to_ascii_lowercase();
                    k.contains("bates") || k.contains("exhibit")
                };
                for (k, x) in m.iter().filter(|(k, _)| !is_cite(k)) {
                    walk(x, k, out);
                }
                for (k, x) in m.iter().filter(|(k, _)| is_cite(k)) {
                    walk(x, k, out);
                }
                if !out.ends_with("\n\n") && !out.is_empty() {
                    out.push('\n');
                }
            }
            Value::Array(a) => {
                for x in a {
                    walk(x, key, out);
                }
            }
            Value::String(s) => out.push_str(&format!("{key}: {s}\n")),
            Value::Number(n) => {
                let money = [
                    "amount", "total", "price", "paid", "due", "balance", "fee", "rent",
                ]
                .iter()
                .any(|w| key.to_ascii_lowercase().contains(w));
                match (money, n.as_f64()) {
                    (true, Some(x)) => out.push_str(&format!("{key}: {}\n", dollars(x))),
                    _ => out.push_str(&format!("{key}: {n}\n")),
                }
            }
            Value::Bool(b) => out.push_str(&format!("{key}: {b}\n")),
            Value::Null => {}
        }
    }
    let mut out = String::new();
    walk(v, "answer", &mut out);
    out
}

pub(super) fn dollars(x: f64) -> String {
    let cents = (x.abs() * 100.0).round() as u64;
    let whole = (cents / 100).to_string();
    let mut grouped = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!(
        "{}${grouped}.{:02}",
        if x < 0.0 { "-" } else { "" },
        cents % 100
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify;
    use serde_json::json;

    #[test]
    fn answers_flatten_for_the_verifier() {
        let a = json!({"amounts": [{"amount": 3875.0, "date": "2024-01-09", "bates": "SMITH000006"}], "total": 1234567.5, "count": 3});
        let t = flatten_answer(&a);
        assert!(t.contains("amount: $3,875.00\n"), "{t}");
        assert!(
            t.contains("date: 2024-01-09\n") && t.contains("bates: SMITH000006\n"),
            "{t}"
        );
        assert!(
            t.contains("total: $1,234,567.50\n") && t.contains("count: 3\n"),
            "{t}"
        );
        assert!(!t.contains('"'));
        // An object's page cite comes after its facts, in a paragraph of its own, so it
        // cites them.
        assert!(
            t.contains("amount: $3,875.00\ndate: 2024-01-09\nbates: SMITH000006\n\n"),
            "{t}"
        );
        let claims = verify::claims(&t, &["SMITH".to_string()]);
        let bound = verify::pinpoint::bind(&t, &claims);
        for (c, b) in claims.iter().zip(&bound) {
            if c.kind != verify::Kind::Bates && c.start < t.find("bates").unwrap() {
                assert_eq!(b.len(), 1, "{} is cited: {t}", c.text);
            }
        }
    }
}

#[cfg(test)]
mod contradiction_tests {
    use super::settle_contradiction;
    use serde_json::json;

    #[test]
    fn a_pass_with_objections_is_read_as_not_passing() {
        let mut a = json!({"passes": true, "objections": ["Paragraph 3 names no recipient."]});
        let why = settle_contradiction(&mut a).unwrap();
        assert_eq!(a["passes"], false);
        assert!(
            why.contains("`passes: true`") && why.contains("1 in `objections`"),
            "{why}"
        );
    }

    #[test]
    fn a_consistent_answer_is_left_alone() {
        for a in [
            json!({"passes": true, "objections": []}),
            json!({"passes": true, "objections": ["", null]}),
            json!({"passes": false, "objections": ["x"]}),
            json!({"grounds": true, "reason": "notice given"}),
        ] {
            let mut b = a.clone();
            assert!(settle_contradiction(&mut b).is_none(), "{a}");
            assert_eq!(a, b);
        }
    }
}
