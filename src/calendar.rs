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

#[cfg(test)]
mod tests {
    use super::is_valid;

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
