//! The byte layout of a checkpoint file (docs/output.md, "checkpoint.talus"): a 32-byte
//! header, the metadata (UTF-8 JSON) and named binary arrays, all little-endian:
//!
//! | bytes | contents |
//! |---|---|
//! | 0..8 | magic `TALUSCKP` |
//! | 8..12 | format version (u32), `VERSION` |
//! | 12..16 | CRC-32 (IEEE, `crc32fast`) of every byte from 16 to the end |
//! | 16..24 | metadata length M (u64) |
//! | 24..32 | data length D (u64) |
//! | 32.. | metadata (M bytes), zero padding to a multiple of 8 |
//! | then | data (D bytes): arrays, each a record `name length (u32)`, `0 (u32)`, `byte length (u64)`, the name, zero padding to 8, the bytes, zero padding to 8 |
//!
//! What the metadata and arrays mean is `super`'s business; this file only packs and checks
//! them. A file that is too short, too long, of another version or whose checksum does not
//! match is refused with an error naming the file and the fault.

use std::path::Path;

use crate::error::{Result, TalusError};

#[cfg(target_endian = "big")]
compile_error!("checkpoint arrays are written in the machine's byte order, which must be little-endian");

/// The first 8 bytes of every checkpoint.
pub const MAGIC: [u8; 8] = *b"TALUSCKP";
/// The layout and meaning this Talus writes and reads. A change of either bumps it.
pub const VERSION: u32 = 3;
/// Bytes before the metadata.
pub const HEADER_BYTES: usize = 32;

/// A decoded checkpoint: its metadata and arrays, checked against the checksum.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Container {
    pub meta: Vec<u8>,
    pub arrays: Vec<(String, Vec<u8>)>,
}

fn pad8(n: usize) -> usize {
    n.div_ceil(8) * 8
}

/// The file holding `meta` and `arrays`.
pub fn encode(meta: &[u8], arrays: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut data = Vec::new();
    for (name, bytes) in arrays {
        data.extend_from_slice(&(name.len() as u32).to_le_bytes());
        data.extend_from_slice(&0u32.to_le_bytes());
        data.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        data.extend_from_slice(name.as_bytes());
        data.resize(pad8(data.len()), 0);
        data.extend_from_slice(bytes);
        data.resize(pad8(data.len()), 0);
    }
    let mut out = Vec::with_capacity(HEADER_BYTES + pad8(meta.len()) + data.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&(meta.len() as u64).to_le_bytes());
    out.extend_from_slice(&(data.len() as u64).to_le_bytes());
    out.extend_from_slice(meta);
    out.resize(HEADER_BYTES + pad8(meta.len()), 0);
    out.extend_from_slice(&data);
    let crc = crc32fast::hash(&out[16..]);
    out[12..16].copy_from_slice(&crc.to_le_bytes());
    out
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Check and unpack the bytes of checkpoint `file`.
pub fn decode(file: &Path, bytes: &[u8]) -> Result<Container> {
    let bad = |message: String| TalusError::checkpoint(file, message);
    let head = &bytes[..bytes.len().min(MAGIC.len())];
    if head != &MAGIC[..head.len()] {
        return Err(bad(format!("not a Talus checkpoint (it starts with {:?}; a checkpoint starts with \"TALUSCKP\")", String::from_utf8_lossy(head))));
    }
    if bytes.len() < HEADER_BYTES {
        return Err(bad(format!("truncated: {} bytes, less than the {HEADER_BYTES}-byte header", bytes.len())));
    }
    let version = u32_at(bytes, 8);
    if version != VERSION {
        return Err(bad(format!("checkpoint format version {version}; this talus ({}) reads version {VERSION} only", env!("CARGO_PKG_VERSION"))));
    }
    let (meta_len, data_len) = (u64_at(bytes, 16), u64_at(bytes, 24));
    let expected = (HEADER_BYTES as u128) + (meta_len as u128).div_ceil(8) * 8 + data_len as u128;
    let len = bytes.len() as u128;
    if len < expected {
        return Err(bad(format!("truncated: the header announces {expected} bytes, the file has {len}")));
    }
    if len > expected {
        return Err(bad(format!("corrupt: the header announces {expected} bytes, the file has {len}")));
    }
    let (stored, computed) = (u32_at(bytes, 12), crc32fast::hash(&bytes[16..]));
    if stored != computed {
        return Err(bad(format!("corrupt: the header's checksum is {stored:08x}, the contents' {computed:08x}")));
    }
    let meta_len = meta_len as usize;
    let meta = bytes[HEADER_BYTES..HEADER_BYTES + meta_len].to_vec();
    let data = &bytes[HEADER_BYTES + pad8(meta_len)..];
    let mut arrays = Vec::new();
    let mut at = 0usize;
    while at < data.len() {
        let record = |what: &str| bad(format!("corrupt: array record at data byte {at}: {what}"));
        if data.len() - at < 16 {
            return Err(record("cut short"));
        }
        let (name_len, byte_len) = (u32_at(data, at) as usize, u64_at(data, at + 8));
        let name_at = at + 16;
        let bytes_at = pad8(name_at + name_len);
        let end = (bytes_at as u128) + byte_len as u128;
        if end > data.len() as u128 {
            return Err(record("runs past the end"));
        }
        let name = std::str::from_utf8(&data[name_at..name_at + name_len]).map_err(|_| record("name is not UTF-8"))?;
        arrays.push((name.to_string(), data[bytes_at..end as usize].to_vec()));
        at = pad8(end as usize);
    }
    Ok(Container { meta, arrays })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        encode(b"{\"a\":1}", &[("x".into(), vec![1, 2, 3]), ("longer_name".into(), vec![9; 17]), ("empty".into(), Vec::new())])
    }

    #[test]
    fn round_trip() {
        let c = decode(Path::new("c.talus"), &sample()).unwrap();
        assert_eq!(c.meta, b"{\"a\":1}");
        assert_eq!(c.arrays, vec![("x".to_string(), vec![1, 2, 3]), ("longer_name".to_string(), vec![9; 17]), ("empty".to_string(), Vec::new())]);
        assert_eq!(sample().len() % 8, 0);
    }

    #[test]
    fn faults_are_named() {
        let f = Path::new("c.talus");
        let err = |b: &[u8]| decode(f, b).unwrap_err().to_string();
        let good = sample();
        assert!(err(&good[..good.len() - 3]).contains("truncated"), "{}", err(&good[..good.len() - 3]));
        assert!(err(&good[..20]).contains("truncated"));
        let mut flipped = good.clone();
        flipped[40] ^= 0x10;
        assert!(err(&flipped).contains("checksum"));
        let mut v1 = good.clone();
        v1[8] = 1;
        assert!(err(&v1).contains("version 1"));
        assert!(err(b"{\"not\": \"a checkpoint\"}").contains("not a Talus checkpoint"));
        let mut longer = good.clone();
        longer.push(0);
        assert!(err(&longer).contains("corrupt"));
        assert!(err(&good[..good.len() - 3]).starts_with("c.talus: "));
    }
}
