//! Pre-tokenization: a pattern splits a text into the pieces that are then
//! byte-pair encoded one by one, exactly as tiktoken's `encode_ordinary`
//! splits them (`fancy_regex::Regex::find_iter` over the pattern).
//!
//! The o200k_base and cl100k_base patterns, and the classic non-possessive
//! cl100k pattern that Llama 3 ships, have hand-written splitters: one pass
//! over the bytes, an ASCII fast path, the Unicode classes of
//! [`super::unicode`] for the rest, no allocation. Any other pattern runs on
//! a small backtracking engine ([`general`]).
//!
//! How the hand-written splitters follow the patterns (leftmost-first
//! alternation, each branch with backtracking, or not where possessive):
//!
//! - o200k_base, at a position `i`: (A) an optional prefix `p` (not `\r`,
//!   `\n`, a letter or a number), then `[Lu Lt Lm Lo M]*` and
//!   `[Ll Lm Lo M]+`: the upper run is taken whole and, when no lower
//!   letter follows it, given back down to its last character that is also
//!   in the lower class; the prefix is dropped only if that fails (which
//!   matters when `p` is a mark, itself in both classes). (B) the same with
//!   `[upper]+[lower]*`. Both end with an optional ASCII-apostrophe
//!   contraction, case-insensitively (`ſ` is an `s`). (C) up to three
//!   numbers. (D) an optional space, a run of neither white space nor
//!   letter nor number, then `\r`/`\n`s. (E) white space up to its last
//!   `\r`/`\n`; (F) a white space run at the end of the text, or all of it
//!   but its last character; (G) one white space character.
//! - cl100k_base: a contraction first; then a letter run with an optional
//!   (possessive) prefix; up to three numbers; (D) as above; a white space
//!   run that reaches the end of the text (`\s++$`); then (E), (F), (G).
//! - Llama 3's classic pattern is cl100k_base without `\s++$`.

pub mod general;

use super::unicode::{props_of, CategorySet, Props, ASCII_PROPS};
use crate::error::Result;

/// A pre-tokenization pattern, compiled.
#[derive(Debug, Clone)]
pub enum Pattern {
    /// [`Pattern::O200K`], hand-written.
    O200k,
    /// [`Pattern::CL100K`], hand-written.
    Cl100k,
    /// [`Pattern::LLAMA3`] (the classic, non-possessive cl100k pattern),
    /// hand-written.
    Llama3,
    /// Any other pattern, on the backtracking engine.
    General(general::Regex),
}

impl Pattern {
    /// The o200k_base pattern, exactly as tiktoken-rs 0.12.1 writes it.
    pub const O200K: &'static str = concat!(
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        "|",
        r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        "|",
        r"\p{N}{1,3}",
        "|",
        r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
        "|",
        r"\s*[\r\n]+",
        "|",
        r"\s+(?!\S)",
        "|",
        r"\s+"
    );

    /// The cl100k_base pattern, exactly as tiktoken-rs 0.12.1 writes it.
    pub const CL100K: &'static str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";

    /// The classic cl100k_base pattern (non-possessive, without `\s++$`),
    /// which Llama 3's tokenizer ships. It is not equivalent to
    /// [`Pattern::CL100K`]: white space that ends the text and holds a line
    /// break splits after the break here, and stays one piece there.
    pub const LLAMA3: &'static str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

    /// Compiles `source`. The built-in patterns ([`Pattern::O200K`],
    /// [`Pattern::CL100K`], [`Pattern::LLAMA3`]) get the hand-written
    /// splitters; any other pattern gets the general engine. An unsupported
    /// or malformed pattern is [`crate::Error::InvalidArgument`] whose
    /// message starts with "pattern" and names the problem and its byte
    /// position.
    pub fn compile(source: &str) -> Result<Pattern> {
        Ok(match source {
            Self::O200K => Pattern::O200k,
            Self::CL100K => Pattern::Cl100k,
            Self::LLAMA3 => Pattern::Llama3,
            _ => Pattern::General(general::Regex::new(source)?),
        })
    }

    /// Compiles `source` on the general engine, even if it is a built-in
    /// pattern (for tests and comparisons).
    pub fn compile_general(source: &str) -> Result<Pattern> {
        Ok(Pattern::General(general::Regex::new(source)?))
    }

    /// Calls `piece(start, end)` for each piece of `text` in order (byte
    /// offsets): the same pieces as `fancy_regex::Regex::new(source)
    /// .find_iter(text)` gives, less any empty ones. For the built-in
    /// patterns the pieces tile the text exactly and the call allocates
    /// nothing.
    pub fn split(&self, text: &str, mut piece: impl FnMut(usize, usize)) {
        let b = text.as_bytes();
        let mut i = 0;
        match self {
            Pattern::O200k => {
                while i < b.len() {
                    let e = o200k_piece(b, i);
                    piece(i, e);
                    i = e;
                }
            }
            Pattern::Cl100k => {
                while i < b.len() {
                    let e = cl100k_piece(b, i, true);
                    piece(i, e);
                    i = e;
                }
            }
            Pattern::Llama3 => {
                while i < b.len() {
                    let e = cl100k_piece(b, i, false);
                    piece(i, e);
                    i = e;
                }
            }
            Pattern::General(re) => re.find_iter(text, piece),
        }
    }

    /// Like [`split`](Self::split), but stops after the first piece for
    /// which `piece` returns false (truncation re-splits a suffix only until
    /// it meets the whole text's pieces again).
    pub fn split_while(&self, text: &str, mut piece: impl FnMut(usize, usize) -> bool) {
        let b = text.as_bytes();
        let next: fn(&[u8], usize) -> usize = match self {
            Pattern::O200k => o200k_piece,
            Pattern::Cl100k => |b, i| cl100k_piece(b, i, true),
            Pattern::Llama3 => |b, i| cl100k_piece(b, i, false),
            Pattern::General(re) => {
                let mut going = true;
                re.find_iter(text, |s, e| {
                    if going {
                        going = piece(s, e);
                    }
                });
                return;
            }
        };
        let mut i = 0;
        while i < b.len() {
            let e = next(b, i);
            if !piece(i, e) {
                return;
            }
            i = e;
        }
    }

    /// The pieces of `text` as byte ranges (a convenience over
    /// [`split`](Self::split); it allocates).
    pub fn pieces(&self, text: &str) -> Vec<(usize, usize)> {
        let mut v = vec![];
        self.split(text, |s, e| v.push((s, e)));
        v
    }

    /// Whether this pattern has a hand-written splitter.
    pub fn is_hand_written(&self) -> bool {
        !matches!(self, Pattern::General(_))
    }
}

// The classes the hand-written splitters distinguish, one bit each.

/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`: o200k's upper class.
const UP: u8 = 1;
/// `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`: o200k's lower class.
const LO: u8 = 2;
/// `\p{L}`.
const LET: u8 = 4;
/// `\p{N}`.
const NUM: u8 = 8;
/// `\s`.
const WS: u8 = 16;
/// `\r` or `\n`.
const CRLF: u8 = 32;
/// `\p{M}`.
const MARK: u8 = 64;

/// What ends `[^\s\p{L}\p{N}]+`: white space, a letter or a number (the
/// bits are disjoint: `+` is their union).
const NOT_OTHER: u8 = WS + LET + NUM;

/// o200k's upper class as categories: Lu Lt Lm Lo M.
const UPPER_SET: CategorySet = CategorySet(0b11101 + CategorySet::MARK.0);
/// o200k's lower class as categories: Ll Lm Lo M.
const LOWER_SET: CategorySet = CategorySet(0b11010 + CategorySet::MARK.0);

/// The class bits of a properties byte.
const fn kind_of_props(p: u8) -> u8 {
    let gc = (p & 31) as u32;
    let mut k = 0;
    if UPPER_SET.0 >> gc & 1 != 0 {
        k |= UP;
    }
    if LOWER_SET.0 >> gc & 1 != 0 {
        k |= LO;
    }
    if CategorySet::LETTER.0 >> gc & 1 != 0 {
        k |= LET;
    }
    if CategorySet::NUMBER.0 >> gc & 1 != 0 {
        k |= NUM;
    }
    if CategorySet::MARK.0 >> gc & 1 != 0 {
        k |= MARK;
    }
    if p & Props::WHITE_SPACE != 0 {
        k |= WS;
    }
    k
}

/// The class bits of every properties byte.
static KIND_OF_PROPS: [u8; 256] = {
    let mut t = [0; 256];
    let mut p = 0;
    while p < 256 {
        t[p] = kind_of_props(p as u8);
        p += 1;
    }
    t
};

/// The class bits of every ASCII byte.
static ASCII_KIND: [u8; 128] = {
    let mut t = [0; 128];
    let mut c = 0;
    while c < 128 {
        t[c] = kind_of_props(ASCII_PROPS[c]);
        c += 1;
    }
    t[b'\r' as usize] |= CRLF;
    t[b'\n' as usize] |= CRLF;
    t
};

/// The code point starting at `b[i]` (a valid UTF-8 lead byte of at least
/// two bytes) and its length.
#[inline]
fn decode_multi(b: &[u8], i: usize) -> (u32, usize) {
    let b0 = b[i] as u32;
    let c1 = (b[i + 1] & 0x3F) as u32;
    if b0 < 0xE0 {
        (((b0 & 0x1F) << 6) + c1, 2)
    } else if b0 < 0xF0 {
        (
            ((b0 & 0x0F) << 12) + (c1 << 6) + (b[i + 2] & 0x3F) as u32,
            3,
        )
    } else {
        (
            ((b0 & 0x07) << 18)
                + (c1 << 12)
                + (((b[i + 2] & 0x3F) as u32) << 6)
                + (b[i + 3] & 0x3F) as u32,
            4,
        )
    }
}

/// The class bits of the character at `b[i]` and its length in bytes.
#[inline(always)]
fn kind_at(b: &[u8], i: usize) -> (u8, usize) {
    let c = b[i];
    if c.is_ascii() {
        (ASCII_KIND[c as usize], 1)
    } else {
        let (cp, len) = decode_multi(b, i);
        (KIND_OF_PROPS[props_of(cp).0 as usize], len)
    }
}

/// The end of the run of characters from `i` whose class bits meet `mask`.
#[inline(always)]
fn run(b: &[u8], mut i: usize, mask: u8) -> usize {
    while i < b.len() {
        let c = b[i];
        if c.is_ascii() {
            if ASCII_KIND[c as usize] & mask == 0 {
                break;
            }
            i += 1;
        } else {
            let (k, l) = kind_at(b, i);
            if k & mask == 0 {
                break;
            }
            i += l;
        }
    }
    i
}

/// The end of the run of characters from `i` that are neither white space,
/// letters nor numbers (`[^\s\p{L}\p{N}]+`).
#[inline(always)]
fn run_other(b: &[u8], mut i: usize) -> usize {
    while i < b.len() {
        let (k, l) = kind_at(b, i);
        if k & NOT_OTHER != 0 {
            break;
        }
        i += l;
    }
    i
}

/// The end of the run of `\r` and `\n` bytes from `i` (and `/` with
/// `slash`).
#[inline(always)]
fn run_crlf(b: &[u8], mut i: usize, slash: bool) -> usize {
    while i < b.len() && (b[i] == b'\r' || b[i] == b'\n' || (slash && b[i] == b'/')) {
        i += 1;
    }
    i
}

/// At most three `\p{N}` from `i` (which is one).
#[inline]
fn numbers(b: &[u8], mut i: usize) -> usize {
    for _ in 0..3 {
        if i >= b.len() {
            break;
        }
        let (k, l) = kind_at(b, i);
        if k & NUM == 0 {
            break;
        }
        i += l;
    }
    i
}

/// The end of `'s|'t|'re|'ve|'m|'ll|'d`, case-insensitively, at `i` (where
/// `b[i]` is `'`), if one matches.
#[inline]
fn contraction_at(b: &[u8], i: usize) -> Option<usize> {
    let c1 = *b.get(i + 1)?;
    match c1 | 0x20 {
        b's' | b't' | b'm' | b'd' => Some(i + 2),
        b'r' | b'v' if b.get(i + 2).map(|c| c | 0x20) == Some(b'e') => Some(i + 3),
        b'l' if b.get(i + 2).map(|c| c | 0x20) == Some(b'l') => Some(i + 3),
        // U+017F LATIN SMALL LETTER LONG S folds to s.
        0xE5 if c1 == 0xC5 && b.get(i + 2) == Some(&0xBF) => Some(i + 3),
        _ => None,
    }
}

/// `e` and an optional contraction after it.
#[inline(always)]
fn with_contraction(b: &[u8], e: usize) -> usize {
    if e < b.len() && b[e] == b'\'' {
        contraction_at(b, e).unwrap_or(e)
    } else {
        e
    }
}

/// o200k's `[upper]*[lower]+` from `j`: the end, if it matches.
#[inline(always)]
fn upper_star_lower_plus(b: &[u8], j: usize) -> Option<usize> {
    let mut k = j;
    // The end of the last character of the upper run that is also lower.
    let mut last_both = None;
    while k < b.len() {
        let (kd, l) = kind_at(b, k);
        if kd & UP == 0 {
            if kd & LO != 0 {
                return Some(run(b, k + l, LO));
            }
            break;
        }
        k += l;
        if kd & LO != 0 {
            last_both = Some(k);
        }
    }
    last_both
}

/// o200k's `[upper]+[lower]*` from `j`: the end, if it matches.
#[inline(always)]
fn upper_plus_lower_star(b: &[u8], j: usize) -> Option<usize> {
    let (k, _) = kind_at(b, j);
    if k & UP == 0 {
        return None;
    }
    Some(run(b, run(b, j, UP), LO))
}

/// The white space branches from `i` (a white space character): `\s++$`
/// if `to_end`, then `\s*[\r\n]+`, `\s+(?!\S)`, `\s+`.
#[inline]
fn white_space(b: &[u8], i: usize, to_end: bool) -> usize {
    let mut k = i;
    let mut last = i;
    let mut line_end = None;
    while k < b.len() {
        let (kd, l) = kind_at(b, k);
        if kd & WS == 0 {
            break;
        }
        if kd & CRLF != 0 {
            line_end = Some(k + 1);
        }
        last = k;
        k += l;
    }
    if to_end && k == b.len() {
        return k;
    }
    if let Some(e) = line_end {
        return e;
    }
    if k == b.len() || last == i {
        return k;
    }
    last
}

/// `[^\s\p{L}\p{N}]+` from `j` (one such character) after an optional
/// space, then `[\r\n]*` (o200k: `[\r\n/]*`).
#[inline(always)]
fn other_run(b: &[u8], j: usize, slash: bool) -> usize {
    run_crlf(b, run_other(b, j), slash)
}

/// The end of o200k_base's piece at `i`.
#[inline]
fn o200k_piece(b: &[u8], i: usize) -> usize {
    let n = b.len();
    let (k0, l0) = kind_at(b, i);
    if k0 & LET != 0 {
        // Every letter is in the upper or the lower class: one of the two
        // matches.
        let e = upper_star_lower_plus(b, i)
            .or_else(|| upper_plus_lower_star(b, i))
            .unwrap_or(n);
        return with_contraction(b, e);
    }
    if k0 & NUM != 0 {
        return numbers(b, i);
    }
    if k0 & CRLF == 0 {
        // `[^\r\n\p{L}\p{N}]` matches: first as the letters' prefix.
        let j = i + l0;
        // (Nothing at the text's end: None.)
        if let Some(e) = upper_star_lower_plus(b, j) {
            return with_contraction(b, e);
        }
        if k0 & MARK != 0 {
            // Without the prefix, a mark starts `[upper]*[lower]+` itself.
            let e = upper_star_lower_plus(b, i).unwrap_or(j);
            return with_contraction(b, e);
        }
        if j < n {
            if let Some(e) = upper_plus_lower_star(b, j) {
                return with_contraction(b, e);
            }
        }
        if k0 & WS == 0 {
            return other_run(b, j, true);
        }
        if b[i] == b' ' && j < n && kind_at(b, j).0 & NOT_OTHER == 0 {
            return other_run(b, j, true);
        }
    }
    white_space(b, i, false)
}

/// The end of cl100k_base's piece at `i` (Llama 3's without `to_end`).
#[inline]
fn cl100k_piece(b: &[u8], i: usize, to_end: bool) -> usize {
    let n = b.len();
    if b[i] == b'\'' {
        if let Some(e) = contraction_at(b, i) {
            return e;
        }
    }
    let (k0, l0) = kind_at(b, i);
    if k0 & LET != 0 {
        return run(b, i + l0, LET);
    }
    if k0 & NUM != 0 {
        return numbers(b, i);
    }
    if k0 & CRLF == 0 {
        let j = i + l0;
        if j < n {
            let (kj, lj) = kind_at(b, j);
            if kj & LET != 0 {
                return run(b, j + lj, LET);
            }
            if k0 & WS == 0 {
                return other_run(b, j, false);
            }
            if b[i] == b' ' && kj & NOT_OTHER == 0 {
                return other_run(b, j, false);
            }
        } else if k0 & WS == 0 {
            return j;
        }
    }
    white_space(b, i, to_end)
}

#[cfg(test)]
mod tests;
