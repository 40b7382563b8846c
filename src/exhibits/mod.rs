//! Exhibits on CPU: Bates stamping (`bates`) and binding with an exhibit index (`merge`).
//! Needs no model and no GPU; pages are read through `sources`.

pub mod bates;
pub mod merge;
pub mod production;
pub mod winansi;
