//! Vocabularies: the tokens of a byte-level BPE with their ranks, and the
//! rank of any byte string in one hash probe or two.
//!
//! Two sources: the compact built-in form of `o200k_base` and `cl100k_base`
//! (`src/text/data/*.bin`: a length byte per token in rank order, then the
//! tokens' bytes), and any vocabulary in tiktoken's file format (one
//! `base64(token) rank` per line), checked line by line.

use crate::error::{Error, Result};
use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

/// The names of the built-in vocabularies.
pub const BUILTIN: [&str; 2] = ["o200k_base", "cl100k_base"];

#[cfg(feature = "builtin-vocabularies")]
fn builtin_data(name: &str) -> Option<&'static [u8]> {
    match name {
        "o200k_base" => Some(include_bytes!("data/o200k_base.bin")),
        "cl100k_base" => Some(include_bytes!("data/cl100k_base.bin")),
        _ => None,
    }
}

/// A built-in vocabulary by name, indexed on first use and then shared by
/// every tokenizer of the process. An unknown name lists the known ones;
/// a library built without the `builtin-vocabularies` feature has none.
pub fn builtin(name: &str) -> Result<Arc<Vocab>> {
    static CACHE: [OnceLock<Arc<Vocab>>; 2] = [OnceLock::new(), OnceLock::new()];
    let Some(k) = BUILTIN.iter().position(|b| *b == name) else {
        return Err(Error::InvalidArgument(format!(
            "name {name:?} is no known encoding; the known ones are \"o200k_base\" and \"cl100k_base\""
        )));
    };
    #[cfg(feature = "builtin-vocabularies")]
    {
        if let Some(v) = CACHE[k].get() {
            return Ok(v.clone());
        }
        let data = builtin_data(name).expect("every BUILTIN name has data");
        let v = Arc::new(Vocab::from_compact(data)?);
        Ok(CACHE[k].get_or_init(|| v).clone())
    }
    #[cfg(not(feature = "builtin-vocabularies"))]
    {
        let _ = (&CACHE, k);
        Err(Error::Unsupported(format!(
            "name {name:?}: this libcupel was built without its vocabularies; build it with the \
             cargo feature \"builtin-vocabularies\" (on by default), or load the vocabulary file \
             with cupel_tokenizer_from_tiktoken"
        )))
    }
}

/// The magic that starts a compact vocabulary (`src/text/data/*.bin`).
pub const MAGIC: &[u8; 8] = b"CUPELVC1";

/// A vocabulary: token bytes, their ranks, and a hash table from bytes to
/// token.
#[derive(Debug, Clone)]
pub struct Vocab {
    /// Every token's bytes, back to back.
    bytes: Cow<'static, [u8]>,
    /// Token `t`'s bytes are `bytes[offsets[t] .. offsets[t + 1]]`.
    offsets: Vec<u32>,
    /// Token `t`'s rank; `None` when every token's rank is its number.
    ranks: Option<Vec<u32>>,
    /// Open addressing, one cache line holds four: each slot has the
    /// token's first eight bytes inline, so most probes touch nothing else.
    slots: Vec<Slot>,
    /// One byte of each slot's hash (0: empty), probed first: 1/16 of the
    /// slots' memory, so a lookup of a string that is no token (half of a
    /// merge's lookups) stays in cache.
    tags: Vec<u8>,
    mask: usize,
    /// The rank of each single byte.
    byte_ranks: [u32; 256],
    /// The rank of each two-byte string (`NO_RANK` when it is no token):
    /// the first round of every merge looks these up.
    pair_ranks: Vec<u32>,
    /// A number no other vocabulary of the process has (the piece caches
    /// key their entries by it).
    id: u64,
    /// The longest token's length: no longer string is looked up.
    max_len: usize,
}

#[cfg(test)]
thread_local! {
    /// Slots visited by hash lookups on this thread (the tests hold the
    /// table to its cost).
    static PROBES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Compact data built by a test, kept for the life of the process and
/// reachable from this static (a leak checker sees it held, not lost).
#[cfg(test)]
pub(crate) fn test_compact(tokens: &[Vec<u8>]) -> &'static [u8] {
    static KEPT: std::sync::Mutex<Vec<&'static [u8]>> = std::sync::Mutex::new(Vec::new());
    let data: &'static [u8] = Vec::leak(Vocab::to_compact(tokens));
    KEPT.lock().unwrap().push(data);
    data
}

/// The next vocabulary id (0 is never given: it marks empty cache entries).
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// No rank: the two-byte table's empty entry.
const NO_RANK: u32 = u32::MAX;

/// A hash-table slot: the token's first eight bytes (zero-padded) and
/// `meta`: bits 0-31 the token's number + 1 (0: empty), 32-39 its length
/// (saturating at 255), 40-63 24 bits of its hash.
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    head: u64,
    meta: u64,
}

/// The probe tag of a hash: its top byte, never 0 (0 marks an empty slot).
#[inline]
fn tag(h: u64) -> u8 {
    ((h >> 56) as u8).max(1)
}

/// The part of a slot's `meta` that a lookup compares: length and hash bits.
#[inline]
fn key_meta(len: usize, h: u64) -> u64 {
    ((len.min(255) as u64) << 32) + ((h >> 40) << 40)
}

/// A 64-bit hash of a token's bytes: its first and last eight bytes and its
/// length, multiplied and folded (tokens are short: most fit in 16 bytes).
#[inline]
pub(crate) fn hash(b: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let n = b.len();
    let (head, tail) = if n >= 8 {
        (load8(&b[..8]), load8(&b[n - 8..]))
    } else {
        let x = load_short(b);
        (x, x.rotate_left(29))
    };
    let mut h = (head ^ (n as u64).wrapping_mul(K)).wrapping_mul(K);
    h ^= tail.rotate_left(17);
    h = h.wrapping_mul(K);
    // Long tokens: the bytes between the first and last eight too, so
    // long tokens that share both ends still spread (none for 16 or less).
    for c in b.get(8..n.saturating_sub(8)).unwrap_or(&[]).chunks(8) {
        h = (h ^ load_short(c)).wrapping_mul(K);
    }
    h ^ (h >> 29)
}

#[inline]
fn load8(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_le_bytes(a)
}

/// Up to 8 bytes as a little-endian integer (the rest zero).
#[inline]
fn load_short(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a[..b.len()].copy_from_slice(b);
    u64::from_le_bytes(a)
}

// A vocabulary is never empty (every loader refuses one), so it has no
// `is_empty` to go with `len`.
#[allow(clippy::len_without_is_empty)]
impl Vocab {
    /// The number of tokens.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Token `t`'s bytes.
    #[inline]
    pub fn token(&self, t: usize) -> &[u8] {
        &self.bytes[self.offsets[t] as usize..self.offsets[t + 1] as usize]
    }

    /// This vocabulary's process-wide id.
    #[inline]
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Token `t`'s rank.
    #[inline]
    fn rank_of(&self, t: usize) -> u32 {
        match &self.ranks {
            Some(r) => r[t],
            None => t as u32,
        }
    }

    /// The rank of `b`, if it is a token.
    #[inline]
    pub fn rank(&self, b: &[u8]) -> Option<u32> {
        match b.len() {
            1 => return Some(self.byte_ranks[b[0] as usize]),
            2 => {
                let r = self.pair_ranks[((b[0] as usize) << 8) + b[1] as usize];
                return (r != NO_RANK).then_some(r);
            }
            n if n > self.max_len => return None,
            _ => {}
        }
        match self.probe(b, hash(b)) {
            Ok(t) => Some(self.rank_of(t)),
            Err(_) => None,
        }
    }

    /// Walks `b`'s probe sequence (its hash is `h`): `Ok` with the token
    /// that is `b`, or `Err` with the first empty slot.
    #[inline]
    fn probe(&self, b: &[u8], h: u64) -> std::result::Result<usize, usize> {
        let want_tag = tag(h);
        let key = (load_short(&b[..b.len().min(8)]), key_meta(b.len(), h));
        let mut i = h as usize & self.mask;
        loop {
            #[cfg(test)]
            PROBES.with(|c| c.set(c.get() + 1));
            let t = self.tags[i];
            if t == 0 {
                return Err(i);
            }
            if t == want_tag {
                let s = self.slots[i];
                if (s.head, s.meta & !0xffff_ffff) == key {
                    let t = (s.meta as u32 - 1) as usize;
                    if b.len() <= 8 || self.token(t)[8..] == b[8..] {
                        return Ok(t);
                    }
                }
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Builds the hash table and the byte ranks over `bytes`/`offsets`;
    /// `line` names token `t` in messages (its line in a file).
    fn index(
        bytes: Cow<'static, [u8]>,
        offsets: Vec<u32>,
        ranks: Option<Vec<u32>>,
        line: impl Fn(usize) -> String,
    ) -> Result<Vocab> {
        let n = offsets.len() - 1;
        let cap = (n * 2).next_power_of_two().max(16);
        let mut v = Vocab {
            bytes,
            offsets,
            ranks,
            slots: vec![Slot::default(); cap],
            tags: vec![0; cap],
            mask: cap - 1,
            byte_ranks: [u32::MAX; 256],
            pair_ranks: vec![NO_RANK; 1 << 16],
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            max_len: 0,
        };
        let tok = |offsets: &[u32], t: usize| offsets[t] as usize..offsets[t + 1] as usize;
        for t in 0..n {
            let range = tok(&v.offsets, t);
            v.max_len = v.max_len.max(range.len());
            let b = &v.bytes[range];
            if b.is_empty() {
                return Err(Error::InvalidArgument(format!(
                    "{}: the token is empty",
                    line(t)
                )));
            }
            let h = hash(b);
            match v.probe(b, h) {
                Ok(u) => {
                    return Err(Error::InvalidArgument(format!(
                        "{}: the token {:?} is already {}",
                        line(t),
                        String::from_utf8_lossy(b),
                        line(u)
                    )))
                }
                Err(i) => {
                    v.slots[i] = Slot {
                        head: load_short(&b[..b.len().min(8)]),
                        meta: key_meta(b.len(), h) + (t as u64 + 1),
                    };
                    v.tags[i] = tag(h);
                }
            }
            let r = match &v.ranks {
                Some(r) => r[t],
                None => t as u32,
            };
            match b.len() {
                1 => v.byte_ranks[b[0] as usize] = r,
                2 => v.pair_ranks[((b[0] as usize) << 8) + b[1] as usize] = r,
                _ => {}
            }
        }
        if let Some(missing) = v.byte_ranks.iter().position(|&r| r == u32::MAX) {
            return Err(Error::InvalidArgument(format!(
                "the vocabulary has no token for the single byte {missing:#04x}: every byte needs one"
            )));
        }
        Ok(v)
    }

    /// A vocabulary in the compact built-in form (see the module docs).
    pub fn from_compact(data: &'static [u8]) -> Result<Vocab> {
        let bad = |what: &str| Error::Internal(format!("a built-in vocabulary is corrupt: {what}"));
        if data.len() < 12 || &data[..8] != MAGIC {
            return Err(bad("no magic"));
        }
        let n = u32::from_le_bytes([data[8], data[9], data[10], data[11]]) as usize;
        let lens = data
            .get(12..12 + n)
            .ok_or_else(|| bad("lengths cut short"))?;
        let mut offsets = Vec::with_capacity(n + 1);
        let mut at = 0u32;
        offsets.push(0);
        for &l in lens {
            at += l as u32;
            offsets.push(at);
        }
        let body = &data[12 + n..];
        if body.len() != at as usize {
            return Err(bad("the token bytes do not match the lengths"));
        }
        Vocab::index(Cow::Borrowed(body), offsets, None, |t| format!("token {t}"))
    }

    /// Writes `tokens` (in rank order: token `r` has rank `r`) in the
    /// compact form.
    pub fn to_compact(tokens: &[Vec<u8>]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&(tokens.len() as u32).to_le_bytes());
        out.extend(tokens.iter().map(|t| {
            assert!(
                !t.is_empty() && t.len() <= 255,
                "a token of {} bytes",
                t.len()
            );
            t.len() as u8
        }));
        for t in tokens {
            out.extend_from_slice(t);
        }
        out
    }

    /// A vocabulary in tiktoken's file format: lines of `base64(token)`,
    /// one space, the decimal rank; blank lines are skipped. A malformed
    /// line, a duplicate token or rank, or a missing single-byte token is
    /// `InvalidArgument` naming the line.
    pub fn from_tiktoken(file: &[u8]) -> Result<Vocab> {
        let mut bytes = Vec::with_capacity(file.len() * 3 / 4);
        let mut offsets = vec![0u32];
        let mut ranks = Vec::new();
        let mut lines = Vec::new();
        for (k, raw) in file.split(|&b| b == b'\n').enumerate() {
            let no = k + 1;
            let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
            if raw.iter().all(|b| b.is_ascii_whitespace()) {
                continue;
            }
            let bad = |why: String| {
                Error::InvalidArgument(format!(
                    "line {no} of the vocabulary ({:?}): {why}",
                    String::from_utf8_lossy(&raw[..raw.len().min(40)])
                ))
            };
            let mut fields = raw.split(|&b| b == b' ').filter(|f| !f.is_empty());
            let (Some(tok), Some(rank), None) = (fields.next(), fields.next(), fields.next())
            else {
                return Err(bad("expected `base64-token rank`".into()));
            };
            let start = bytes.len();
            decode_base64(tok, &mut bytes)
                .map_err(|e| bad(format!("the token is not base64: {e}")))?;
            if bytes.len() - start > u32::MAX as usize / 2 || bytes.len() > u32::MAX as usize {
                return Err(bad("the vocabulary is too large".into()));
            }
            let rank = std::str::from_utf8(rank)
                .ok()
                .filter(|r| r.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|r| r.parse::<u32>().ok())
                .ok_or_else(|| bad("the rank is not a number from 0 to 4294967295".into()))?;
            offsets.push(bytes.len() as u32);
            ranks.push(rank);
            lines.push(no);
        }
        if ranks.is_empty() {
            return Err(Error::InvalidArgument(
                "the vocabulary has no tokens".into(),
            ));
        }
        // Ranks are unique.
        let mut sorted: Vec<(u32, usize)> = ranks.iter().copied().zip(0..).collect();
        sorted.sort_unstable();
        if let Some(w) = sorted.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(Error::InvalidArgument(format!(
                "line {}: rank {} is already the rank of line {}",
                lines[w[1].1], w[1].0, lines[w[0].1]
            )));
        }
        let contiguous = ranks.iter().enumerate().all(|(i, &r)| r as usize == i);
        let line_of = move |t: usize| format!("line {}", lines[t]);
        Vocab::index(
            Cow::Owned(bytes),
            offsets,
            (!contiguous).then_some(ranks),
            line_of,
        )
    }

    /// Heap bytes this vocabulary holds (the built-in token bytes are in the
    /// library image and not counted).
    pub fn heap_bytes(&self) -> usize {
        let owned = match &self.bytes {
            Cow::Owned(b) => b.capacity(),
            Cow::Borrowed(_) => 0,
        };
        owned
            + self.offsets.capacity() * 4
            + self.ranks.as_ref().map_or(0, |r| r.capacity() * 4)
            + self.slots.capacity() * std::mem::size_of::<Slot>()
            + self.pair_ranks.capacity() * 4
            + self.tags.capacity()
    }
}

/// Decodes standard base64 (with `=` padding, as tiktoken writes it) onto
/// `out`.
fn decode_base64(s: &[u8], out: &mut Vec<u8>) -> std::result::Result<(), String> {
    fn value(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
    if !s.len().is_multiple_of(4) {
        return Err(format!("its length {} is not a multiple of 4", s.len()));
    }
    let chunks = s.len() / 4;
    for (k, c) in s.chunks(4).enumerate() {
        let pad = c.iter().rev().take_while(|&&b| b == b'=').count();
        if pad > 2 || (pad > 0 && k + 1 != chunks) {
            return Err("misplaced '=' padding".into());
        }
        let mut v = 0u32;
        for (j, &b) in c[..4 - pad].iter().enumerate() {
            let d = value(b)
                .ok_or_else(|| format!("{:?} at {} is no base64 digit", b as char, k * 4 + j))?;
            v |= d << (18 - 6 * j);
        }
        let got = [(v >> 16) as u8, (v >> 8) as u8, v as u8];
        out.extend_from_slice(&got[..3 - pad]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOLDEN: [u64; 6] = [
        0x0,
        0xf999_dcc9_f676_a5a5,
        0x4402_11f4_1089_b187,
        0x9ad0_a25f_6bac_1272,
        0xa655_ae2e_3549_5c03,
        0x6b65_5f0e_a4a2_0685,
    ];

    fn tiktoken(tokens: &[(&[u8], u32)]) -> Vec<u8> {
        let mut f = Vec::new();
        for (t, r) in tokens {
            let mut b64 = String::new();
            encode_base64(t, &mut b64);
            f.extend_from_slice(format!("{b64} {r}\n").as_bytes());
        }
        f
    }

    fn encode_base64(b: &[u8], out: &mut String) {
        const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        for c in b.chunks(3) {
            let v = (c[0] as u32) << 16
                | (*c.get(1).unwrap_or(&0) as u32) << 8
                | *c.get(2).unwrap_or(&0) as u32;
            for j in 0..4 {
                if j <= c.len() {
                    out.push(A[(v >> (18 - 6 * j) & 63) as usize] as char);
                } else {
                    out.push('=');
                }
            }
        }
    }

    fn bytes_vocab(extra: &[&[u8]]) -> Vec<(Vec<u8>, u32)> {
        let mut v: Vec<(Vec<u8>, u32)> = (0..=255u8).map(|b| (vec![b], b as u32)).collect();
        for (k, e) in extra.iter().enumerate() {
            v.push((e.to_vec(), 256 + k as u32));
        }
        v
    }

    #[test]
    fn lookups_take_the_short_ways_and_few_probes() {
        let v = builtin("o200k_base").unwrap();
        let probes = || PROBES.with(|c| c.replace(0));
        probes();
        // Single bytes, byte pairs and strings longer than any token: no probe.
        assert_eq!(v.rank(b"a"), Some(64));
        assert_eq!(v.rank(b"ab"), Some(378));
        assert_eq!(v.rank(b"\xff\xfe"), None);
        assert_eq!(v.rank(&[b'x'; 200]), None);
        assert_eq!(probes(), 0);
        // Every token finds itself in few probes (the table is at most half
        // full), and so do strings that are no token.
        let n = v.len();
        for t in 0..n {
            assert_eq!(v.rank(v.token(t)), Some(t as u32));
        }
        let hits = probes();
        let mut x = 7u64;
        let misses: Vec<Vec<u8>> = (0..20_000)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (0..3 + (x >> 60) as usize % 6)
                    .map(|k| b"qxzjvkw"[((x >> (8 * k)) % 7) as usize])
                    .collect()
            })
            .filter(|s: &Vec<u8>| v.rank(s).is_none())
            .collect();
        probes();
        for s in &misses {
            assert_eq!(v.rank(s), None);
        }
        let miss = probes();
        let (per_hit, per_miss) = (hits as f64 / n as f64, miss as f64 / misses.len() as f64);
        eprintln!("{per_hit:.2} probes a hit, {per_miss:.2} a miss");
        assert!(per_hit < 1.45, "{per_hit} probes a hit");
        assert!(per_miss < 2.2, "{per_miss} probes a miss");
    }

    #[test]
    fn hash_tag_and_key_are_these_functions() {
        // Known answers: the table is built and probed with these, so a
        // change here is a change of the format of every loaded table.
        let inputs: [&[u8]; 6] = [
            b"",
            b"a",
            b" the",
            b"abcdefgh",
            b"hello world!!",
            &[7u8; 40],
        ];
        let got: Vec<u64> = inputs.iter().map(|b| hash(b)).collect();
        assert_eq!(got, GOLDEN);
        assert_eq!(tag(0xAB00_0000_0000_0000), 0xAB);
        assert_eq!(tag(0x00FF_FFFF_FFFF_FFFF), 1, "0 marks an empty slot");
        assert_eq!(
            key_meta(5, 0x1234_5678_9ABC_DEF0),
            0x1234_5600_0000_0000 | 5 << 32
        );
        assert_eq!(key_meta(300, 0), 255 << 32, "lengths saturate at 255");
        assert_eq!(load_short(b"ab"), 0x6261);
        assert_eq!(load8(b"abcdefgh"), 0x6867_6665_6463_6261);
    }

    #[test]
    fn base64_decodes_every_length_and_refuses_what_is_not() {
        for n in 0..40usize {
            let data: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
            let mut s = String::new();
            encode_base64(&data, &mut s);
            let mut out = Vec::new();
            decode_base64(s.as_bytes(), &mut out).unwrap();
            assert_eq!(out, data);
        }
        let mut out = Vec::new();
        assert!(decode_base64(b"abc", &mut out)
            .unwrap_err()
            .contains("multiple of 4"));
        assert!(decode_base64(b"ab*d", &mut out)
            .unwrap_err()
            .contains("'*' at 2"));
        assert!(decode_base64(b"a===", &mut out)
            .unwrap_err()
            .contains("padding"));
        assert!(decode_base64(b"ab==abcd", &mut out)
            .unwrap_err()
            .contains("padding"));
    }

    #[test]
    fn a_tiktoken_file_gives_every_rank_and_no_other() {
        let v = bytes_vocab(&[b"ab", b"abc", b"hello world, this is long", b"\xff\xfe"]);
        let refs: Vec<(&[u8], u32)> = v.iter().map(|(t, r)| (t.as_slice(), *r)).collect();
        let vocab = Vocab::from_tiktoken(&tiktoken(&refs)).unwrap();
        assert_eq!(vocab.len(), 260);
        for (t, r) in &v {
            assert_eq!(vocab.rank(t), Some(*r), "{t:?}");
        }
        assert_eq!(vocab.rank(b"abcd"), None);
        assert_eq!(vocab.rank(b"ba"), None);
        assert_eq!(vocab.rank(b""), None);
    }

    #[test]
    fn ranks_need_not_be_in_order_or_contiguous() {
        let mut f = tiktoken(&[(b"xy", 1000)]);
        let bytes: Vec<[u8; 1]> = (0..=255u8).rev().map(|b| [b]).collect();
        let lines: Vec<(&[u8], u32)> = bytes.iter().map(|b| (&b[..], 5 + b[0] as u32)).collect();
        f.extend(tiktoken(&lines));
        let vocab = Vocab::from_tiktoken(&f).unwrap();
        assert_eq!(vocab.rank(b"xy"), Some(1000));
        assert_eq!(vocab.rank(b"a"), Some(5 + b'a' as u32));
    }

    #[test]
    fn malformed_files_name_the_line() {
        let good = tiktoken(
            &bytes_vocab(&[])
                .iter()
                .map(|(t, r)| (t.as_slice(), *r))
                .collect::<Vec<_>>(),
        );
        let with = |extra: &str| {
            let mut f = good.clone();
            f.extend_from_slice(extra.as_bytes());
            Vocab::from_tiktoken(&f).unwrap_err().to_string()
        };
        assert!(with("YWI=\n").contains("line 257"), "{}", with("YWI=\n"));
        assert!(with("YWI= x\n").contains("line 257") && with("YWI= x\n").contains("rank"));
        assert!(with("YWI= -1\n").contains("rank"));
        assert!(with("YWI= 1 2\n").contains("expected"));
        assert!(with("Y!I= 300\n").contains("not base64"));
        assert!(
            with("YWI= 5\n").contains("rank 5 is already the rank of line 6"),
            "{}",
            with("YWI= 5\n")
        );
        let dup = with("YQ== 300\n");
        assert!(
            dup.contains("line 257") && dup.contains("already line 98"),
            "{dup}"
        );
        let e = Vocab::from_tiktoken(b"YQ== 0\n").unwrap_err().to_string();
        assert!(e.contains("single byte 0x00"), "{e}");
        assert!(Vocab::from_tiktoken(b"\n\n")
            .unwrap_err()
            .to_string()
            .contains("no tokens"));
        // \r\n line ends and blank lines are fine.
        let crlf: Vec<u8> = good
            .iter()
            .flat_map(|&b| {
                if b == b'\n' {
                    vec![b'\r', b'\n']
                } else {
                    vec![b]
                }
            })
            .collect();
        assert_eq!(Vocab::from_tiktoken(&crlf).unwrap().len(), 256);
    }

    #[test]
    fn the_builtin_vocabularies_load_and_unknown_names_list_the_known_ones() {
        for (name, n) in [("o200k_base", 199_998), ("cl100k_base", 100_256)] {
            let t = std::time::Instant::now();
            let v = builtin(name).unwrap();
            eprintln!(
                "{name}: {n} tokens indexed in {:?}, {} heap bytes",
                t.elapsed(),
                v.heap_bytes()
            );
            assert_eq!(v.len(), n);
            assert_eq!(v.rank(b" the"), Some(if n > 100_256 { 290 } else { 279 }));
            assert!(Arc::ptr_eq(&v, &builtin(name).unwrap()), "indexed once");
        }
        let e = builtin("gpt2").unwrap_err().to_string();
        assert!(e.contains("\"o200k_base\" and \"cl100k_base\""), "{e}");
    }

    #[test]
    fn the_compact_form_round_trips() {
        let tokens: Vec<Vec<u8>> = bytes_vocab(&[b"ab", b"hello"])
            .into_iter()
            .map(|(t, _)| t)
            .collect();
        let data = test_compact(&tokens);
        let v = Vocab::from_compact(data).unwrap();
        assert_eq!(v.len(), 258);
        assert_eq!(v.rank(b"hello"), Some(257));
        assert_eq!(v.token(256), b"ab");
        assert!(Vocab::from_compact(&data[..20]).is_err());
        assert!(Vocab::from_compact(b"NOTMAGIC\0\0\0\0").is_err());
    }
}
