//! Productions: the documents a party hands the other side, as one volume folder.
//!
//! `IMAGES/` holds one PDF per page, each stamped bottom-right with its Bates number and
//! bottom-left with its document's confidentiality legend (or, with `images tiff`, one
//! single-page Group IV TIFF per page, that PDF rasterised, in folders of a thousand);
//! `NATIVES/` the documents produced
//! as they are (with a placeholder page carrying their number); `TEXT/` one text file per
//! document, of what was produced; `DATA/` the Concordance `.dat` and Opticon `.opt` load
//! files, the privilege log (CSV and DOCX) for what was withheld, and the reconciliation.
//!
//! Redactions are burned in, so no redacted byte is written anywhere, and each box carries
//! its reason: in a PDF volume, a PDF page whose every glyph lexrun can vouch for is produced
//! as itself with the redacted glyphs taken out of its content stream (`vector.rs`); any other
//! PDF or image page, and every page of a TIFF volume, is rasterised and the pixels under each redaction blacked out; a text page is set
//! without the redacted characters. The whole volume is built
//! in a staging folder, then read back (`reread`) — every page's stamps, the load files
//! against the images, and every redacted string searched for in every byte, text layer and
//! OCR of every page — and only then moved into place. Any problem found before or while
//! building leaves nothing behind.
//!
//! The steps, each in its own file: collecting the documents and what becomes of each
//! (`collect.rs`), preparing their pages (`prepare.rs`, `imaging.rs`), numbering them
//! (`number.rs`), writing the staged volume (`write.rs`), reconciling it (`reconcile.rs`)
//! and reading it back (`reread.rs`). The types they share are in `types.rs`.

mod collect;
mod embedded;
mod finder;
mod fonts;
mod glyphs;
mod imaging;
pub mod loadfile;
mod number;
pub mod page;
mod prepare;
mod privlog;
mod reconcile;
mod redact;
pub mod reread;
pub mod tiff;
mod types;
mod vector;
mod words;
mod write;

use std::path::Path;

use types::{io, Fate};
pub use types::{
    label, BoxRule, Held, Images, Input, Level, Pattern, Produced, ProductionError, Report, Spec,
    VolumeRecord, Withhold, IMAGES_PER_FOLDER,
};

/// Produces a volume into `out/VOLUME`, continuing or checked against the `earlier` volumes.
pub fn produce(
    spec: &Spec,
    inputs: &[Input],
    out: &Path,
    earlier: &[VolumeRecord],
) -> Result<Report, ProductionError> {
    let docs = collect::collect(inputs, spec);
    let others = number::others(spec, earlier);
    let start = number::start(spec, &others);
    let mut fates: Vec<Fate> = docs.iter().map(|d| collect::fate(d, spec)).collect();
    let work = tempfile::Builder::new()
        .prefix(".production-")
        .tempdir_in(out_parent(out)?)
        .map_err(io(out))?;
    let mut ready = prepare::prepare_all(&docs, &mut fates, spec, work.path())?;
    let numbers = number::number(&docs, &fates, &ready, start)?;
    number::check_collisions(spec, (numbers.first, numbers.last), &others)?;
    // Build the volume in a staging folder beside its destination.
    let staged = work.path().join(&spec.volume);
    write::stage(&staged)?;
    let scratch = work.path().join("raster");
    let written = write::documents(spec, &staged, scratch, &docs, &fates, &numbers, &mut ready)?;
    write::data(spec, &staged, &written, &docs, &fates)?;
    let again = number::again(&docs, &fates, &others);
    let tally = reconcile::Tally {
        docs: &docs,
        counts: &ready.counts,
        again: &again,
        rasterised: &ready.rasterised,
    };
    let report = reconcile::report(spec, out.join(&spec.volume), &written, &tally);
    reconcile::write(spec, &staged.join("DATA"), &report)?;
    if !report.balanced {
        return Err(ProductionError::Reread(vec![
            "the reconciliation does not balance: a collected item is not in exactly one place"
                .into(),
        ]));
    }
    // Read everything back before the volume is put in place.
    let range = (numbers.first, numbers.last);
    let problems = reread::check(
        &staged,
        spec,
        &written.fields,
        &written.stamps,
        &written.redacted,
        range,
    );
    if !problems.is_empty() {
        return Err(ProductionError::Reread(problems));
    }
    let dest = out.join(&spec.volume);
    crate::atomic::replace_dir(&staged, &dest).map_err(io(&dest))?;
    Ok(report)
}

fn out_parent(out: &Path) -> Result<&Path, ProductionError> {
    std::fs::create_dir_all(out).map_err(io(out))?;
    Ok(out)
}
