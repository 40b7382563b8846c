//! Exhibits on CPU: Bates stamping (`bates`). Needs no model and no GPU.

pub mod bates;
