//! What a scan finds: a citation, the reporter it names and where it is.

use crate::catalogue::Edition;

/// The reporter a citation names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reporter {
    Known(&'static Edition),
    /// Accepted by the workflow: its squashed spelling.
    Allowed(String),
}

impl Reporter {
    pub fn key(&self) -> &str {
        match self {
            Reporter::Known(e) => &e.key,
            Reporter::Allowed(k) => k,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cite {
    Full {
        volume: u32,
        reporter: Reporter,
        /// `None`: a blank placeholder page (`___`).
        page: Option<u32>,
        pin: Option<String>,
        year: Option<u16>,
        /// The letter of an unpublished or lettered decision (`210454-U`: `u`), part of its
        /// identity.
        suffix: Option<char>,
    },
    Short {
        volume: u32,
        reporter: Reporter,
        pin: String,
    },
    /// Shaped like a citation, but its reporter is in no catalogue: a full citation
    /// (`156 Eng. Rep. 145`) or, with `short`, its short form (`156 Eng. Rep. at 151`).
    Unknown {
        abbreviation: String,
        volume: u32,
        short: bool,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found {
    pub start: usize,
    pub end: usize,
    pub cite: Cite,
}
