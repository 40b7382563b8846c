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

/// The civil date (year, month 1–12, day 1–31) of a day counted from 1970-01-01 (negative
/// before it): Howard Hinnant's `civil_from_days`.
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// A moment (milliseconds since the epoch) as the minute it fell in, in UTC:
/// `2024-01-05 14:03 UTC`.
pub fn utc_minute(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        rest / 3600,
        rest % 3600 / 60
    )
}

#[cfg(test)]
mod tests {
    use super::{is_valid, parse_iso, utc_minute};

    #[test]
    fn moments_in_utc() {
        assert_eq!(utc_minute(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc_minute(1_709_251_380_000), "2024-03-01 00:03 UTC");
        assert_eq!(utc_minute(951_782_400_000 + 59_999), "2000-02-29 00:00 UTC");
    }

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
