//! Exhibits on CPU: Bates stamping (`bates`), binding with an exhibit index (`merge`), and
//! production volumes with load files, legends and burned-in redactions (`production`).
//! Needs no model and no GPU; pages are read through `sources`.

use lexrun_base::{atomic, calendar};
use lexrun_document as document;
use lexrun_sources as sources;

pub mod bates;
pub mod merge;
mod metrics;
pub mod production;
mod winansi;
