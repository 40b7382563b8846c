//! Exhibits on CPU: Bates stamping (`bates`), binding with an exhibit index (`merge`), and
//! production volumes with load files, legends and burned-in redactions (`production`).
//! Needs no model and no GPU; pages are read through `sources`.

pub mod bates;
pub mod merge;
pub mod metrics;
pub mod production;
pub mod winansi;
