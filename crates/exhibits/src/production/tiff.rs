//! Single-page bilevel TIFF images as production protocols ask for them: CCITT Group 4
//! (T.6) in one strip, WhiteIsZero, at the production's resolution. The container is written
//! by hand (little-endian, one IFD, no metadata that could carry a word of the page), and
//! read back here too: its structure checked and its pixels decoded, for the volume's
//! re-reading.

use fax::{decoder, encoder::Encoder, Color, VecWriter};

use super::page::Gray;

/// Grey levels at or above this are white: the same cut as the PDF pages' 1-bit images.
pub const WHITE_FROM: u8 = 160;

// TIFF field types.
const SHORT: u16 = 3;
const LONG: u16 = 4;
const RATIONAL: u16 = 5;

/// What a TIFF says of itself, read back.
#[derive(Clone, Debug, PartialEq)]
pub struct Info {
    pub width: u32,
    pub height: u32,
    /// Horizontal and vertical resolution, in dots per inch.
    pub dpi: (f64, f64),
    /// The image, row by row, `true` black.
    pub black: Vec<bool>,
}

/// A page's raster as a Group IV TIFF at `dpi`; `None` when it is too large for the format's
/// run lengths (a side of more than 65,535 pixels).
pub fn encode(img: &Gray, dpi: u32) -> Option<Vec<u8>> {
    let (w, h) = (u32::try_from(img.w).ok()?, u32::try_from(img.h).ok()?);
    if w == 0 || h == 0 || w > u32::from(u16::MAX) || h > u32::from(u16::MAX) {
        return None;
    }
    let mut enc = Encoder::new(VecWriter::new());
    for row in img.px.chunks_exact(img.w).take(img.h) {
        let pels = row.iter().map(|&p| {
            if p >= WHITE_FROM {
                Color::White
            } else {
                Color::Black
            }
        });
        // VecWriter never fails.
        enc.encode_line(pels, w).ok()?;
    }
    let data = enc.finish().ok()?.finish();
    Some(container(&data, w, h, dpi))
}

/// The file: header, the strip, then the IFD and its two resolutions.
fn container(data: &[u8], w: u32, h: u32, dpi: u32) -> Vec<u8> {
    let strip = 8u32;
    let mut ifd = strip + data.len() as u32;
    ifd += ifd % 2; // an IFD starts on a word boundary
    let entries: [(u16, u16, u32); 15] = [
        (254, LONG, 0),                 // NewSubfileType: a full-resolution page
        (256, LONG, w),                 // ImageWidth
        (257, LONG, h),                 // ImageLength
        (258, SHORT, 1),                // BitsPerSample
        (259, SHORT, 4),                // Compression: CCITT T.6
        (262, SHORT, 0),                // PhotometricInterpretation: WhiteIsZero
        (266, SHORT, 1),                // FillOrder: most significant bit first
        (273, LONG, strip),             // StripOffsets
        (274, SHORT, 1),                // Orientation: top-left
        (277, SHORT, 1),                // SamplesPerPixel
        (278, LONG, h),                 // RowsPerStrip: one strip
        (279, LONG, data.len() as u32), // StripByteCounts
        (282, RATIONAL, 0),             // XResolution (offset filled in below)
        (283, RATIONAL, 0),             // YResolution
        (296, SHORT, 2),                // ResolutionUnit: inch
    ];
    // T6Options (293) is left out: its default, 0, is what is written (no uncompressed mode).
    let rationals = ifd + 2 + 12 * entries.len() as u32 + 4;
    let mut out = Vec::with_capacity(rationals as usize + 16);
    out.extend_from_slice(b"II*\0");
    out.extend_from_slice(&ifd.to_le_bytes());
    out.extend_from_slice(data);
    out.resize(ifd as usize, 0);
    out.extend_from_slice(&(entries.len() as u16).to_le_bytes());
    for (tag, kind, value) in entries {
        out.extend_from_slice(&tag.to_le_bytes());
        out.extend_from_slice(&kind.to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes());
        let value = match tag {
            282 => rationals,
            283 => rationals + 8,
            _ => value,
        };
        // A SHORT sits in the first two bytes of the value field.
        out.extend_from_slice(&value.to_le_bytes());
    }
    out.extend_from_slice(&0u32.to_le_bytes()); // no next IFD: one page
    for _ in 0..2 {
        out.extend_from_slice(&dpi.to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes());
    }
    out
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// One IFD entry's single value (a SHORT or LONG), or a RATIONAL's offset.
struct Entry {
    kind: u16,
    count: u32,
    value: u32,
}

impl Entry {
    fn number(&self, b: &[u8], at: usize) -> Option<u32> {
        match (self.kind, self.count) {
            (SHORT, 1) => u16_at(b, at + 8).map(u32::from),
            (LONG, 1) => Some(self.value),
            _ => None,
        }
    }
}

/// Reads a TIFF as [`encode`] writes it, and what protocols ask of one: a single page,
/// little-endian, bilevel, Group IV in one strip, WhiteIsZero, its resolution in inches;
/// then decodes every row. The error says what is wrong.
pub fn read(b: &[u8]) -> Result<Info, String> {
    if b.get(..4) != Some(b"II*\0") {
        return Err("not a little-endian TIFF".into());
    }
    let ifd = u32_at(b, 4).ok_or("it is cut short")? as usize;
    let n = u16_at(b, ifd).ok_or("its IFD lies outside the file")? as usize;
    let mut fields = std::collections::BTreeMap::new();
    for i in 0..n {
        let at = ifd + 2 + 12 * i;
        let tag = u16_at(b, at).ok_or("its IFD is cut short")?;
        let kind = u16_at(b, at + 2).ok_or("its IFD is cut short")?;
        let count = u32_at(b, at + 4).ok_or("its IFD is cut short")?;
        let value = u32_at(b, at + 8).ok_or("its IFD is cut short")?;
        let e = Entry { kind, count, value };
        fields.insert(tag, (e, at));
    }
    let next = u32_at(b, ifd + 2 + 12 * n).ok_or("its IFD is cut short")?;
    if next != 0 {
        return Err("it has more than one page".into());
    }
    let num = |tag: u16, name: &str| -> Result<u32, String> {
        let (e, at) = fields.get(&tag).ok_or(format!("it has no {name}"))?;
        e.number(b, *at)
            .ok_or(format!("its {name} is not a single number"))
    };
    let want = |tag: u16, name: &str, value: u32, default: Option<u32>| -> Result<(), String> {
        let got = match (fields.contains_key(&tag), default) {
            (false, Some(d)) => d,
            _ => num(tag, name)?,
        };
        if got == value {
            Ok(())
        } else {
            Err(format!("its {name} is {got}, not {value}"))
        }
    };
    let width = num(256, "ImageWidth")?;
    let height = num(257, "ImageLength")?;
    want(258, "BitsPerSample", 1, Some(1))?;
    want(259, "Compression", 4, None)?;
    want(262, "PhotometricInterpretation", 0, None)?;
    want(266, "FillOrder", 1, Some(1))?;
    want(277, "SamplesPerPixel", 1, Some(1))?;
    want(296, "ResolutionUnit", 2, Some(2))?;
    want(293, "T6Options", 0, Some(0))?;
    let rows = num(278, "RowsPerStrip").unwrap_or(u32::MAX);
    if rows < height {
        return Err(format!("it has {rows} rows a strip, not one strip"));
    }
    let offset = num(273, "StripOffsets")? as usize;
    let len = num(279, "StripByteCounts")? as usize;
    let data = b
        .get(offset..offset.saturating_add(len))
        .ok_or("its strip lies outside the file")?;
    let res = |tag: u16, name: &str| -> Result<f64, String> {
        let (e, _) = fields.get(&tag).ok_or(format!("it has no {name}"))?;
        if e.kind != RATIONAL || e.count != 1 {
            return Err(format!("its {name} is not a rational"));
        }
        let at = e.value as usize;
        let (p, q) = (u32_at(b, at), u32_at(b, at + 4));
        match (p, q) {
            (Some(p), Some(q)) if q > 0 => Ok(f64::from(p) / f64::from(q)),
            _ => Err(format!("its {name} cannot be read")),
        }
    };
    let dpi = (res(282, "XResolution")?, res(283, "YResolution")?);
    let mut black = Vec::with_capacity(width as usize * height as usize);
    let mut lines = 0u32;
    let decoded = decoder::decode_g4(data.iter().copied(), width, None, |t| {
        if lines < height {
            black.extend(decoder::pels(t, width).map(|c| c == Color::Black));
        }
        lines += 1;
    });
    if decoded.is_none() {
        return Err(format!(
            "its Group IV data does not decode (stopped after row {lines})"
        ));
    }
    if lines != height {
        return Err(format!(
            "its Group IV data holds {lines} rows, its ImageLength says {height}"
        ));
    }
    Ok(Info {
        width,
        height,
        dpi,
        black,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::production::page::PxBox;

    /// A page-like raster: white, a black frame, boxes and a grey ramp across the cut.
    fn sample(w: usize, h: usize) -> Gray {
        let mut g = Gray {
            w,
            h,
            px: vec![255; w * h],
        };
        g.fill(PxBox {
            x0: 0,
            y0: 0,
            x1: w,
            y1: 2,
        });
        g.fill(PxBox {
            x0: 0,
            y0: 0,
            x1: 1,
            y1: h,
        });
        g.fill(PxBox {
            x0: w / 3,
            y0: h / 4,
            x1: w / 2,
            y1: h / 2,
        });
        for y in h / 2..h {
            for x in 0..w {
                // Stripes and a ramp: many short runs and long ones, both colours at the
                // ends of rows.
                g.px[y * w + x] = if (x * 7 + y * 3) % 11 < 5 {
                    ((x * 255) / w) as u8
                } else {
                    255
                };
            }
        }
        g.px[w * h - 1] = 0;
        g
    }

    #[test]
    fn a_page_round_trips_through_group_iv_pixel_for_pixel() {
        for (w, h) in [(1, 1), (9, 3), (64, 40), (2550, 40), (1731, 17)] {
            let g = sample(w, h);
            let tiff = encode(&g, 300).unwrap();
            let info = read(&tiff).unwrap();
            assert_eq!((info.width, info.height), (w as u32, h as u32));
            assert_eq!(info.dpi, (300.0, 300.0));
            let want: Vec<bool> = g.px.iter().map(|&p| p < WHITE_FROM).collect();
            assert_eq!(info.black.len(), want.len());
            let wrong = info.black.iter().zip(&want).filter(|(a, b)| a != b).count();
            assert_eq!(wrong, 0, "{w}×{h}: {wrong} pixels differ");
        }
    }

    #[test]
    fn the_container_says_group_iv_white_is_zero_at_300_dpi_and_one_page() {
        let g = sample(100, 50);
        let tiff = encode(&g, 300).unwrap();
        // The header and the IFD's own words, independently of `read`.
        assert_eq!(&tiff[..4], b"II*\0");
        let ifd = u32_at(&tiff, 4).unwrap() as usize;
        assert_eq!(ifd % 2, 0);
        let n = u16_at(&tiff, ifd).unwrap() as usize;
        let tag_value = |tag: u16| {
            (0..n)
                .map(|i| ifd + 2 + 12 * i)
                .find(|&at| u16_at(&tiff, at) == Some(tag))
                .map(|at| u32_at(&tiff, at + 8).unwrap())
        };
        assert_eq!(tag_value(259), Some(4));
        assert_eq!(tag_value(262), Some(0));
        assert_eq!(tag_value(258), Some(1));
        let x = tag_value(282).unwrap() as usize;
        assert_eq!(
            (u32_at(&tiff, x), u32_at(&tiff, x + 4)),
            (Some(300), Some(1))
        );
        assert_eq!(u32_at(&tiff, ifd + 2 + 12 * n), Some(0));
        // Tags in ascending order, as the format requires.
        let tags: Vec<u16> = (0..n)
            .map(|i| u16_at(&tiff, ifd + 2 + 12 * i).unwrap())
            .collect();
        assert!(tags.windows(2).all(|p| p[0] < p[1]), "{tags:?}");
    }

    #[test]
    fn a_damaged_tiff_says_what_is_wrong() {
        let tiff = encode(&sample(64, 40), 300).unwrap();
        assert!(read(b"MM\0*").unwrap_err().contains("little-endian"));
        let mut cut = tiff.clone();
        cut.truncate(20);
        assert!(read(&cut).is_err());
        // The strip's bytes spoiled: the rows no longer decode to the declared height.
        let mut bad = tiff.clone();
        for b in &mut bad[8..40] {
            *b = 0;
        }
        assert!(read(&bad).is_err());
        // A second page declared.
        let ifd = u32_at(&tiff, 4).unwrap() as usize;
        let n = u16_at(&tiff, ifd).unwrap() as usize;
        let mut two = tiff.clone();
        two[ifd + 2 + 12 * n..ifd + 6 + 12 * n].copy_from_slice(&8u32.to_le_bytes());
        assert!(read(&two).unwrap_err().contains("more than one page"));
        assert!(encode(
            &Gray {
                w: 70_000,
                h: 1,
                px: vec![255; 70_000]
            },
            300
        )
        .is_none());
    }
}
