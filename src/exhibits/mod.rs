//! Exhibits on CPU: Bates stamping (`bates`), binding with an exhibit index (`merge`), and
//! text per page with OCR where there is no text layer (`text`). Needs no model and no GPU.

pub mod bates;
pub mod merge;
pub mod text;
