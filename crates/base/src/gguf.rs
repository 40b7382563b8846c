//! A reader for the header of GGUF model files: architecture, shape and weight size.
//!
//! Only the header is read (metadata and tensor table), never the weights, so checking a plan
//! against a 100 GB model takes milliseconds. Every length in the file is bounded before it is
//! trusted: a corrupt or hostile header is an error, not an allocation of terabytes.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

use serde::Serialize;

const MAGIC: &[u8; 4] = b"GGUF";
const MAX_STRING: u64 = 16 << 20;
const MAX_ARRAY: u64 = 1 << 24;
const MAX_ITEMS: u64 = 1 << 20;
const MAX_DIMS: u32 = 8;

#[derive(Debug, thiserror::Error)]
pub enum GgufError {
    #[error("cannot read the file: {0}")]
    Io(#[from] io::Error),
    #[error("not a GGUF file (it does not start with the bytes `GGUF`)")]
    NotGguf,
    #[error("GGUF version {0} is not supported (versions 2 and 3 are)")]
    Version(u32),
    #[error("the header is corrupt: {0}")]
    Corrupt(String),
}

/// A metadata value. Arrays of numbers are kept (per-layer head counts need them); other
/// arrays, such as a tokenizer's vocabulary, are skipped and kept only as their length.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Value {
    Int(i128),
    Float(f64),
    Bool(bool),
    Text(String),
    Numbers(Vec<i128>),
    Skipped { len: u64 },
}

impl Value {
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Int(i) => u64::try_from(*i).ok(),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Tensor {
    pub name: String,
    pub dims: Vec<u64>,
    pub ggml_type: u32,
}

/// What a header says about a model, in the terms the plan checks need.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Header {
    pub version: u32,
    pub architecture: Option<String>,
    pub metadata: BTreeMap<String, Value>,
    pub tensors: Vec<Tensor>,
}

impl Header {
    pub fn read_path(path: &Path) -> Result<Header, GgufError> {
        let f = File::open(path)?;
        Header::read(&mut BufReader::new(f))
    }

    pub fn read(r: &mut impl Read) -> Result<Header, GgufError> {
        let mut magic = [0u8; 4];
        r.read_exact(&mut magic).map_err(eof_is_corrupt)?;
        if &magic != MAGIC {
            return Err(GgufError::NotGguf);
        }
        let version = read_u32(r)?;
        if !(2..=3).contains(&version) {
            return Err(GgufError::Version(version));
        }
        let n_tensors = read_u64(r)?;
        let n_kv = read_u64(r)?;
        if n_tensors > MAX_ITEMS || n_kv > MAX_ITEMS {
            return Err(GgufError::Corrupt(format!(
                "{n_tensors} tensors and {n_kv} metadata entries are more than any model has"
            )));
        }
        let mut metadata = BTreeMap::new();
        for _ in 0..n_kv {
            let key = read_string(r)?;
            let ty = read_u32(r)?;
            let value = read_value(r, ty)?;
            metadata.insert(key, value);
        }
        let mut tensors = Vec::with_capacity(n_tensors as usize);
        for _ in 0..n_tensors {
            let name = read_string(r)?;
            let n_dims = read_u32(r)?;
            if n_dims > MAX_DIMS {
                return Err(GgufError::Corrupt(format!(
                    "tensor `{name}` claims {n_dims} dimensions"
                )));
            }
            let dims = (0..n_dims)
                .map(|_| read_u64(r))
                .collect::<Result<Vec<_>, _>>()?;
            let ggml_type = read_u32(r)?;
            let _offset = read_u64(r)?;
            tensors.push(Tensor {
                name,
                dims,
                ggml_type,
            });
        }
        let architecture = match metadata.get("general.architecture") {
            Some(Value::Text(a)) => Some(a.clone()),
            _ => None,
        };
        Ok(Header {
            version,
            architecture,
            metadata,
            tensors,
        })
    }

    fn arch_key(&self, suffix: &str) -> Option<&Value> {
        let arch = self.architecture.as_deref()?;
        self.metadata.get(&format!("{arch}.{suffix}"))
    }

    fn arch_u64(&self, suffix: &str) -> Option<u64> {
        self.arch_key(suffix).and_then(Value::as_u64)
    }

    pub fn block_count(&self) -> Option<u64> {
        self.arch_u64("block_count")
    }

    pub fn context_length(&self) -> Option<u64> {
        self.arch_u64("context_length")
    }

    pub fn embedding_length(&self) -> Option<u64> {
        self.arch_u64("embedding_length")
    }

    pub fn head_count(&self) -> Option<u64> {
        self.arch_u64("attention.head_count")
    }

    pub fn expert_count(&self) -> Option<u64> {
        self.arch_u64("expert_count")
    }

    pub fn expert_used_count(&self) -> Option<u64> {
        self.arch_u64("expert_used_count")
    }

    /// KV heads per layer. GGUF stores one number for all layers, or (hybrid models) one per
    /// layer; a missing value means no grouped-query attention, i.e. as many as query heads.
    pub fn kv_heads_per_layer(&self) -> Option<Vec<u64>> {
        let layers = self.block_count()?;
        match self.arch_key("attention.head_count_kv") {
            Some(Value::Numbers(v)) => Some(v.iter().map(|x| (*x).max(0) as u64).collect()),
            Some(v) => Some(vec![v.as_u64()?; layers as usize]),
            None => Some(vec![self.head_count()?; layers as usize]),
        }
    }

    fn head_dim(&self) -> Option<u64> {
        Some(self.embedding_length()? / self.head_count()?.max(1))
    }

    pub fn key_length(&self) -> Option<u64> {
        self.arch_u64("attention.key_length")
            .or_else(|| self.head_dim())
    }

    pub fn value_length(&self) -> Option<u64> {
        self.arch_u64("attention.value_length")
            .or_else(|| self.head_dim())
    }

    /// Bytes of all tensors, from their shapes and types. `None` if a tensor has a type this
    /// reader does not know.
    pub fn weight_bytes(&self) -> Option<u64> {
        let mut total: u64 = 0;
        for t in &self.tensors {
            let elems = t.dims.iter().try_fold(1u64, |a, d| a.checked_mul(*d))?;
            let (block, bytes) = ggml_type_size(t.ggml_type)?;
            total = total.checked_add(elems.div_ceil(block).checked_mul(bytes)?)?;
        }
        Some(total)
    }

    /// The names of the tensor types in the file, most common first, e.g. `["Q8_0", "F32"]`.
    pub fn tensor_types(&self) -> Vec<&'static str> {
        let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
        for t in &self.tensors {
            *counts.entry(ggml_type_name(t.ggml_type)).or_default() += 1;
        }
        let mut v: Vec<_> = counts.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        v.into_iter().map(|(n, _)| n).collect()
    }
}

/// (elements per block, bytes per block) of ggml's tensor types, as ggml defines them.
pub fn ggml_type_size(ty: u32) -> Option<(u64, u64)> {
    Some(match ty {
        0 => (1, 4),      // F32
        1 => (1, 2),      // F16
        2 => (32, 18),    // Q4_0
        3 => (32, 20),    // Q4_1
        6 => (32, 22),    // Q5_0
        7 => (32, 24),    // Q5_1
        8 => (32, 34),    // Q8_0
        9 => (32, 36),    // Q8_1
        10 => (256, 84),  // Q2_K
        11 => (256, 110), // Q3_K
        12 => (256, 144), // Q4_K
        13 => (256, 176), // Q5_K
        14 => (256, 210), // Q6_K
        15 => (256, 292), // Q8_K
        16 => (256, 66),  // IQ2_XXS
        17 => (256, 74),  // IQ2_XS
        18 => (256, 98),  // IQ3_XXS
        19 => (256, 50),  // IQ1_S
        20 => (32, 18),   // IQ4_NL
        21 => (256, 110), // IQ3_S
        22 => (256, 82),  // IQ2_S
        23 => (256, 136), // IQ4_XS
        24 => (1, 1),     // I8
        25 => (1, 2),     // I16
        26 => (1, 4),     // I32
        27 => (1, 8),     // I64
        28 => (1, 8),     // F64
        29 => (256, 56),  // IQ1_M
        30 => (1, 2),     // BF16
        34 => (256, 54),  // TQ1_0
        35 => (256, 66),  // TQ2_0
        39 => (32, 17),   // MXFP4
        _ => return None,
    })
}

pub fn ggml_type_name(ty: u32) -> &'static str {
    match ty {
        0 => "F32",
        1 => "F16",
        2 => "Q4_0",
        3 => "Q4_1",
        6 => "Q5_0",
        7 => "Q5_1",
        8 => "Q8_0",
        9 => "Q8_1",
        10 => "Q2_K",
        11 => "Q3_K",
        12 => "Q4_K",
        13 => "Q5_K",
        14 => "Q6_K",
        15 => "Q8_K",
        16 => "IQ2_XXS",
        17 => "IQ2_XS",
        18 => "IQ3_XXS",
        19 => "IQ1_S",
        20 => "IQ4_NL",
        21 => "IQ3_S",
        22 => "IQ2_S",
        23 => "IQ4_XS",
        24 => "I8",
        25 => "I16",
        26 => "I32",
        27 => "I64",
        28 => "F64",
        29 => "IQ1_M",
        30 => "BF16",
        34 => "TQ1_0",
        35 => "TQ2_0",
        39 => "MXFP4",
        _ => "unknown",
    }
}

fn eof_is_corrupt(e: io::Error) -> GgufError {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        GgufError::Corrupt("the file ends inside its header (truncated?)".into())
    } else {
        GgufError::Io(e)
    }
}

fn read_n<const N: usize>(r: &mut impl Read) -> Result<[u8; N], GgufError> {
    let mut b = [0u8; N];
    r.read_exact(&mut b).map_err(eof_is_corrupt)?;
    Ok(b)
}

fn read_u32(r: &mut impl Read) -> Result<u32, GgufError> {
    Ok(u32::from_le_bytes(read_n(r)?))
}

fn read_u64(r: &mut impl Read) -> Result<u64, GgufError> {
    Ok(u64::from_le_bytes(read_n(r)?))
}

fn read_string(r: &mut impl Read) -> Result<String, GgufError> {
    let len = read_u64(r)?;
    if len > MAX_STRING {
        return Err(GgufError::Corrupt(format!("a string of {len} bytes")));
    }
    let mut buf = vec![0u8; len as usize];
    r.read_exact(&mut buf).map_err(eof_is_corrupt)?;
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

fn skip(r: &mut impl Read, n: u64) -> Result<(), GgufError> {
    let copied = io::copy(&mut r.by_ref().take(n), &mut io::sink())?;
    if copied != n {
        return Err(eof_is_corrupt(io::ErrorKind::UnexpectedEof.into()));
    }
    Ok(())
}

fn scalar_size(ty: u32) -> Option<u64> {
    Some(match ty {
        0 | 1 | 7 => 1,
        2 | 3 => 2,
        4..=6 => 4,
        10..=12 => 8,
        _ => return None,
    })
}

fn read_value(r: &mut impl Read, ty: u32) -> Result<Value, GgufError> {
    Ok(match ty {
        0 => Value::Int(read_n::<1>(r)?[0] as i128),
        1 => Value::Int(i8::from_le_bytes(read_n(r)?) as i128),
        2 => Value::Int(u16::from_le_bytes(read_n(r)?) as i128),
        3 => Value::Int(i16::from_le_bytes(read_n(r)?) as i128),
        4 => Value::Int(read_u32(r)? as i128),
        5 => Value::Int(i32::from_le_bytes(read_n(r)?) as i128),
        6 => Value::Float(f32::from_le_bytes(read_n(r)?) as f64),
        7 => Value::Bool(read_n::<1>(r)?[0] != 0),
        8 => Value::Text(read_string(r)?),
        9 => {
            let item_ty = read_u32(r)?;
            let len = read_u64(r)?;
            if len > MAX_ARRAY {
                return Err(GgufError::Corrupt(format!("an array of {len} items")));
            }
            let numeric = matches!(item_ty, 0..=5 | 10 | 11);
            if numeric && len <= 4096 {
                let mut v = Vec::with_capacity(len as usize);
                for _ in 0..len {
                    match read_value(r, item_ty)? {
                        Value::Int(i) => v.push(i),
                        _ => unreachable!("numeric types read as integers"),
                    }
                }
                Value::Numbers(v)
            } else if let Some(size) = scalar_size(item_ty) {
                skip(r, len * size)?;
                Value::Skipped { len }
            } else if item_ty == 8 {
                for _ in 0..len {
                    let n = read_u64(r)?;
                    if n > MAX_STRING {
                        return Err(GgufError::Corrupt(format!("a string of {n} bytes")));
                    }
                    skip(r, n)?;
                }
                Value::Skipped { len }
            } else {
                return Err(GgufError::Corrupt(format!(
                    "an array of metadata type {item_ty}"
                )));
            }
        }
        10 => Value::Int(read_u64(r)? as i128),
        11 => Value::Int(i64::from_le_bytes(read_n(r)?) as i128),
        12 => Value::Float(f64::from_le_bytes(read_n(r)?)),
        other => return Err(GgufError::Corrupt(format!("unknown metadata type {other}"))),
    })
}

/// Writes GGUF headers: used by the tests and the benchmark to make model files of known shape.
pub mod write {
    /// Metadata values the writer supports.
    pub enum Meta<'a> {
        U32(u32),
        Str(&'a str),
        U32Array(&'a [u32]),
        StrArray(&'a [&'a str]),
    }

    fn string(out: &mut Vec<u8>, s: &str) {
        out.extend((s.len() as u64).to_le_bytes());
        out.extend(s.as_bytes());
    }

    /// A GGUF v3 file: metadata, a tensor table, and zeroed tensor data.
    pub fn gguf(meta: &[(&str, Meta)], tensors: &[(&str, &[u64], u32)]) -> Vec<u8> {
        let mut out = b"GGUF".to_vec();
        out.extend(3u32.to_le_bytes());
        out.extend((tensors.len() as u64).to_le_bytes());
        out.extend((meta.len() as u64).to_le_bytes());
        for (k, v) in meta {
            string(&mut out, k);
            match v {
                Meta::U32(x) => {
                    out.extend(4u32.to_le_bytes());
                    out.extend(x.to_le_bytes());
                }
                Meta::Str(s) => {
                    out.extend(8u32.to_le_bytes());
                    string(&mut out, s);
                }
                Meta::U32Array(a) => {
                    out.extend(9u32.to_le_bytes());
                    out.extend(4u32.to_le_bytes());
                    out.extend((a.len() as u64).to_le_bytes());
                    for x in *a {
                        out.extend(x.to_le_bytes());
                    }
                }
                Meta::StrArray(a) => {
                    out.extend(9u32.to_le_bytes());
                    out.extend(8u32.to_le_bytes());
                    out.extend((a.len() as u64).to_le_bytes());
                    for s in *a {
                        string(&mut out, s);
                    }
                }
            }
        }
        let mut offset = 0u64;
        for (name, dims, ty) in tensors {
            string(&mut out, name);
            out.extend((dims.len() as u32).to_le_bytes());
            for d in *dims {
                out.extend(d.to_le_bytes());
            }
            out.extend(ty.to_le_bytes());
            out.extend(offset.to_le_bytes());
            offset += 32;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::write::{gguf, Meta};
    use super::*;

    fn sample() -> Vec<u8> {
        gguf(
            &[
                ("general.architecture", Meta::Str("qwen3moe")),
                ("qwen3moe.block_count", Meta::U32(2)),
                ("qwen3moe.context_length", Meta::U32(40960)),
                ("qwen3moe.embedding_length", Meta::U32(256)),
                ("qwen3moe.attention.head_count", Meta::U32(8)),
                ("qwen3moe.attention.head_count_kv", Meta::U32(2)),
                ("qwen3moe.attention.key_length", Meta::U32(64)),
                ("qwen3moe.expert_count", Meta::U32(8)),
                ("qwen3moe.expert_used_count", Meta::U32(2)),
                (
                    "tokenizer.ggml.tokens",
                    Meta::StrArray(&["<s>", "</s>", "a"]),
                ),
            ],
            &[
                ("token_embd.weight", &[256, 1000], 8),
                ("output_norm.weight", &[256], 0),
            ],
        )
    }

    #[test]
    fn reads_shape_and_weights() {
        let h = Header::read(&mut sample().as_slice()).unwrap();
        assert_eq!(h.architecture.as_deref(), Some("qwen3moe"));
        assert_eq!(h.block_count(), Some(2));
        assert_eq!(h.context_length(), Some(40960));
        assert_eq!(h.kv_heads_per_layer(), Some(vec![2, 2]));
        assert_eq!(h.key_length(), Some(64));
        assert_eq!(h.value_length(), Some(32));
        assert_eq!(h.expert_count(), Some(8));
        assert_eq!(h.expert_used_count(), Some(2));
        // Q8_0: 256 000 elements / 32 × 34 bytes, plus 256 f32.
        assert_eq!(h.weight_bytes(), Some(256_000 / 32 * 34 + 256 * 4));
        assert_eq!(h.tensor_types(), vec!["F32", "Q8_0"]);
    }

    #[test]
    fn per_layer_kv_heads() {
        let bytes = gguf(
            &[
                ("general.architecture", Meta::Str("hybrid")),
                ("hybrid.block_count", Meta::U32(3)),
                ("hybrid.attention.head_count_kv", Meta::U32Array(&[0, 4, 0])),
            ],
            &[],
        );
        let h = Header::read(&mut bytes.as_slice()).unwrap();
        assert_eq!(h.kv_heads_per_layer(), Some(vec![0, 4, 0]));
    }

    #[test]
    fn every_truncation_is_an_error_not_a_panic() {
        let bytes = sample();
        for cut in 0..bytes.len() {
            assert!(Header::read(&mut &bytes[..cut]).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn rejects_wrong_magic_and_absurd_counts() {
        assert!(matches!(
            Header::read(&mut &b"GGML\x03\0\0\0"[..]),
            Err(GgufError::NotGguf)
        ));
        let mut bytes = b"GGUF".to_vec();
        bytes.extend(3u32.to_le_bytes());
        bytes.extend(u64::MAX.to_le_bytes());
        bytes.extend(0u64.to_le_bytes());
        assert!(matches!(
            Header::read(&mut bytes.as_slice()),
            Err(GgufError::Corrupt(_))
        ));
    }
}
