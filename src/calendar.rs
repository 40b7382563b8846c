//! Calendar arithmetic shared by the checker (date literals in conditions) and the verifier
//! (dates in drafts and evidence).

/// Whether year, month and day name a real date in the Gregorian calendar.
pub fn is_valid(year: i64, month: u32, day: u32) -> bool {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// A `YYYY-MM-DD` date that exists, as (year, month, day).
pub fn parse_iso(s: &str) -> Option<(i64, u32, u32)> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let y = s[..4].parse().ok()?;
    let m = s[5..7].parse().ok()?;
    let d = s[8..].parse().ok()?;
    is_valid(y, m, d).then_some((y, m, d))
}

#[cfg(test)]
mod tests {
    use super::{is_valid, parse_iso};

    #[test]
    fn iso_dates() {
        assert_eq!(parse_iso("2024-02-29"), Some((2024, 2, 29)));
        assert_eq!(parse_iso("2023-02-29"), None);
        assert_eq!(parse_iso("2024-2-29"), None);
        assert_eq!(parse_iso("2024-02-2x"), None);
    }

    #[test]
    fn leap_years_and_month_lengths() {
        assert!(is_valid(2024, 2, 29));
        assert!(!is_valid(2023, 2, 29));
        assert!(!is_valid(1900, 2, 29));
        assert!(is_valid(2000, 2, 29));
        assert!(!is_valid(2024, 4, 31));
        assert!(!is_valid(2024, 13, 1));
        assert!(!is_valid(2024, 1, 0));
    }
}
