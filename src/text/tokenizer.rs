//! A tokenizer: a vocabulary and its pre-tokenization pattern. Counts are
//! tiktoken's `encode_ordinary` lengths; truncation keeps the head, the
//! tail or both ends of a text by the rules of `../shared/abi-text.md`
//! ("Token-exact truncation").

use super::bpe;
use super::pretok::Pattern;
use super::vocab::{self, Vocab};
use crate::error::{Error, Result};
use std::sync::Arc;

/// What truncation keeps (`cupel_keep`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    Head,
    Tail,
    BothEnds,
}

/// A truncation: the kept text is `text[..head_end]` then
/// `text[tail_start..]`; `tokens` is the head's count plus the tail's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    pub head_end: usize,
    pub tail_start: usize,
    pub tokens: usize,
}

/// A vocabulary with its pattern. Immutable: share it between threads.
#[derive(Debug, Clone)]
pub struct Tokenizer {
    vocab: Arc<Vocab>,
    pattern: Arc<Pattern>,
    /// One of the two hand-written patterns, whose pieces depend on little
    /// beyond their own text (truncation counts prefixes locally).
    local: bool,
    /// The built-in encoding's name (`None`: loaded from a file).
    name: Option<&'static str>,
}

/// Batches with fewer bytes than this are counted on the calling thread by
/// `count_many` (starting a thread costs about as much as counting them).
const PARALLEL_BYTES: usize = 32_768; // 32 KiB

/// Where `count_many` splits texts of these byte lengths: the calling
/// thread counts those before the index, a second thread the rest. None:
/// all on the calling thread (one thread, one text, or too few bytes). The
/// first part is the texts that fit in half the bytes, at least one (never
/// all: the last text always ends past the half).
fn split_point(lens: &[usize], threads: usize) -> Option<usize> {
    let total: usize = lens.iter().sum();
    if threads < 2 || total < PARALLEL_BYTES || lens.len() < 2 {
        return None;
    }
    let half = total / 2;
    let mut bytes = 0;
    let at = lens
        .iter()
        .take_while(|&&l| {
            bytes += l;
            bytes <= half
        })
        .count();
    Some(at.max(1))
}

/// The piece cache of each thread: pieces that take more than one token,
/// with their counts, so that a word met again costs one lookup and not a
/// merge. Exact: a hit compares the whole piece. Direct-mapped by hash, one
/// table for short pieces and one for long ones (a CJK run is one piece),
/// shared by every tokenizer the thread uses (entries carry their
/// vocabulary's id). About 0.5 MB per counting thread, freed with it.
struct PieceCache {
    short: Vec<ShortEntry>,
    long: Vec<LongEntry>,
}

const SHORT_ENTRIES: usize = 16384;
const SHORT_BYTES: usize = 22;
const LONG_ENTRIES: usize = 1024;
const LONG_BYTES: usize = 118;

#[derive(Clone, Copy)]
struct ShortEntry {
    vocab: u64,
    len: u8,
    tokens: u8,
    bytes: [u8; SHORT_BYTES],
}

#[derive(Clone, Copy)]
struct LongEntry {
    vocab: u64,
    len: u8,
    tokens: u8,
    bytes: [u8; LONG_BYTES],
}

impl PieceCache {
    /// The tokens of `piece`: one for a token, else its merges, remembered.
    #[inline]
    fn count(&mut self, vocab: &Vocab, piece: &[u8]) -> usize {
        // (Pieces are never empty; a single byte is always a token.)
        if vocab.rank(piece).is_some() {
            return 1;
        }
        let n = piece.len();
        let h = super::vocab::hash(piece) as usize;
        let id = vocab.id();
        macro_rules! cached {
            ($table:expr, $entries:expr, $Entry:ident, $bytes:expr) => {{
                if $table.is_empty() {
                    $table = vec![
                        $Entry {
                            vocab: 0,
                            len: 0,
                            tokens: 0,
                            bytes: [0; $bytes]
                        };
                        $entries
                    ];
                }
                let e = &mut $table[h & ($entries - 1)];
                if e.vocab == id && e.len as usize == n && e.bytes[..n] == *piece {
                    return e.tokens as usize;
                }
                let tokens = bpe::count_merged(vocab, piece);
                *e = $Entry {
                    vocab: id,
                    len: n as u8,
                    tokens: tokens as u8,
                    bytes: [0; $bytes],
                };
                e.bytes[..n].copy_from_slice(piece);
                tokens
            }};
        }
        if n <= SHORT_BYTES {
            cached!(self.short, SHORT_ENTRIES, ShortEntry, SHORT_BYTES)
        } else if n <= LONG_BYTES {
            cached!(self.long, LONG_ENTRIES, LongEntry, LONG_BYTES)
        } else {
            bpe::count_merged(vocab, piece)
        }
    }
}

thread_local! {
    static PIECES: std::cell::RefCell<PieceCache> = const {
        std::cell::RefCell::new(PieceCache { short: Vec::new(), long: Vec::new() })
    };
}

impl Tokenizer {
    /// A built-in encoding: "o200k_base" or "cl100k_base".
    pub fn builtin(name: &str) -> Result<Tokenizer> {
        let vocab = vocab::builtin(name)?;
        let (source, name) = if name == "o200k_base" {
            (Pattern::O200K, "o200k_base")
        } else {
            (Pattern::CL100K, "cl100k_base")
        };
        Ok(Tokenizer {
            vocab,
            pattern: Arc::new(Pattern::compile(source)?),
            local: true,
            name: Some(name),
        })
    }

    /// A vocabulary in tiktoken's file format with its pattern (`None`:
    /// o200k_base's).
    pub fn from_tiktoken(ranks: &[u8], pattern: Option<&str>) -> Result<Tokenizer> {
        let source = pattern.unwrap_or(Pattern::O200K);
        let pattern = Pattern::compile(source)?;
        let local = pattern.is_hand_written();
        Ok(Tokenizer {
            vocab: Arc::new(Vocab::from_tiktoken(ranks)?),
            pattern: Arc::new(pattern),
            local,
            name: None,
        })
    }

    /// The built-in encoding's name; `None` for a vocabulary from a file.
    pub fn name(&self) -> Option<&'static str> {
        self.name
    }

    /// The vocabulary.
    pub fn vocab(&self) -> &Vocab {
        &self.vocab
    }

    /// The number of tokens of `text`.
    pub fn count(&self, text: &str) -> usize {
        let bytes = text.as_bytes();
        let mut n = 0;
        PIECES.with_borrow_mut(|cache| {
            self.pattern.split(text, |s, e| {
                n += cache.count(&self.vocab, &bytes[s..e]);
            });
        });
        n
    }

    /// The counts of many texts, on up to two threads when there is enough
    /// text to share (the work is split by bytes, in order).
    pub fn count_many(&self, texts: &[&str]) -> Vec<usize> {
        let lens: Vec<usize> = texts.iter().map(|t| t.len()).collect();
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(2));
        let Some(at) = split_point(&lens, threads) else {
            return texts.iter().map(|t| self.count(t)).collect();
        };
        let (a, b) = texts.split_at(at);
        // The second half, copied, on a thread of its own that ends with the
        // call (a scoped thread would make std give the calling thread a
        // handle that is never freed: a host's leak checker sees it).
        let mut buf = String::with_capacity(b.iter().map(|t| t.len()).sum());
        let mut ends = Vec::with_capacity(b.len());
        for t in b {
            buf.push_str(t);
            ends.push(buf.len());
        }
        let tk = self.clone();
        let other = std::thread::Builder::new()
            .name("cupel-count".into())
            .spawn(move || {
                let mut start = 0;
                ends.iter()
                    .map(|&e| {
                        let n = tk.count(&buf[start..e]);
                        start = e;
                        n
                    })
                    .collect::<Vec<_>>()
            });
        let mut out: Vec<usize> = a.iter().map(|t| self.count(t)).collect();
        // No thread could start (or it failed): count those here.
        let rest = other.ok().and_then(|h| h.join().ok());
        out.extend(rest.unwrap_or_else(|| b.iter().map(|t| self.count(t)).collect()));
        out
    }

    /// Truncates `text` to at most `max_tokens` by `keep`'s rule.
    pub fn truncate(&self, text: &str, max_tokens: usize, keep: Keep) -> Cut {
        let len = text.len();
        let layout = Layout::of(self, text);
        let total = layout.total();
        if total <= max_tokens {
            return Cut {
                head_end: len,
                tail_start: len,
                tokens: total,
            };
        }
        if max_tokens == 0 {
            return Cut {
                head_end: 0,
                tail_start: len,
                tokens: 0,
            };
        }
        match keep {
            Keep::Head => {
                let (head_end, tokens) = layout.head(self, max_tokens);
                Cut {
                    head_end,
                    tail_start: len,
                    tokens,
                }
            }
            Keep::Tail => {
                let (tail_start, tokens) = layout.tail(self, max_tokens, 0);
                Cut {
                    head_end: 0,
                    tail_start,
                    tokens,
                }
            }
            Keep::BothEnds => {
                let (head_end, head) = layout.head(self, max_tokens.div_ceil(2));
                let (tail_start, tail) = layout.tail(self, max_tokens - head, head_end);
                Cut {
                    head_end,
                    tail_start,
                    tokens: head + tail,
                }
            }
        }
    }
}

/// The pieces of a text with the tokens before each, for truncation.
struct Layout<'t> {
    text: &'t str,
    /// Piece starts, then the text's length.
    starts: Vec<usize>,
    /// `before[i]`: the tokens of the pieces before piece i (one more entry
    /// than pieces: the last is the total).
    before: Vec<usize>,
}

impl<'t> Layout<'t> {
    fn of(tk: &Tokenizer, text: &'t str) -> Layout<'t> {
        let bytes = text.as_bytes();
        let mut starts = Vec::new();
        let mut before = vec![0];
        let mut n = 0;
        PIECES.with_borrow_mut(|cache| {
            tk.pattern.split(text, |s, e| {
                starts.push(s);
                n += cache.count(&tk.vocab, &bytes[s..e]);
                before.push(n);
            })
        });
        starts.push(text.len());
        Layout {
            text,
            starts,
            before,
        }
    }

    fn total(&self) -> usize {
        *self.before.last().unwrap_or(&0)
    }

    fn pieces(&self) -> usize {
        self.starts.len() - 1
    }

    /// The piece that holds byte `at` (< the text's length).
    fn piece_at(&self, at: usize) -> usize {
        self.starts.partition_point(|&s| s <= at) - 1
    }

    /// The token boundaries (ends) of pieces `lo..=hi`, ascending, that are
    /// character boundaries; with the start of piece `lo`.
    fn boundaries(&self, tk: &Tokenizer, lo: usize, hi: usize) -> Vec<usize> {
        let bytes = self.text.as_bytes();
        let mut out = vec![self.starts[lo]];
        for p in lo..=hi {
            let s = self.starts[p];
            bpe::split(&tk.vocab, &bytes[s..self.starts[p + 1]], |e| {
                if self.text.is_char_boundary(s + e) {
                    out.push(s + e);
                }
            });
        }
        out
    }

    /// The count of `text[..b]`, re-splitting only near `b` for the
    /// hand-written patterns (their pieces depend on a few characters after
    /// them, and on a run of white space up to the text's end: so the
    /// re-split starts two pieces before the white space that ends at `b`).
    fn prefix_count(&self, tk: &Tokenizer, b: usize) -> usize {
        if b == 0 {
            return 0;
        }
        if !tk.local {
            return tk.count(&self.text[..b]);
        }
        let mut r = b;
        for c in self.text[..b].chars().rev() {
            if !super::unicode::is_white_space(c) {
                break;
            }
            r -= c.len_utf8();
        }
        let piece = self.piece_at(r.max(1) - 1).saturating_sub(2);
        self.before[piece] + tk.count(&self.text[self.starts[piece]..b])
    }

    /// The count of `text[b..]`: `text[b..]` split until one of its piece
    /// ends is a piece start of the whole text (no pattern looks behind, so
    /// from there on the pieces are the whole text's), then the tokens of
    /// the rest.
    fn suffix_count(&self, tk: &Tokenizer, b: usize) -> usize {
        let len = self.text.len();
        if b >= len {
            return 0;
        }
        if !tk.local {
            return tk.count(&self.text[b..]);
        }
        let bytes = self.text.as_bytes();
        let mut n = 0;
        let mut synced = None;
        PIECES.with_borrow_mut(|cache| {
            tk.pattern.split_while(&self.text[b..], |s, e| {
                n += cache.count(&tk.vocab, &bytes[b + s..b + e]);
                let end = b + e;
                if end < len && self.starts.binary_search(&end).is_ok() {
                    synced = Some(end);
                    return false;
                }
                true
            })
        });
        match synced {
            Some(end) => n + self.total() - self.before[self.piece_at(end)],
            None => n,
        }
    }

    /// KEEP_HEAD: the largest token boundary (and character boundary)
    /// whose prefix counts at most `max`, with that count.
    fn head(&self, tk: &Tokenizer, max: usize) -> (usize, usize) {
        // The piece where the max-th token ends; no boundary past the
        // pieces two after it can count `max` or less.
        let k = self.before.partition_point(|&t| t <= max).saturating_sub(1);
        let hi = (k + 3).min(self.pieces() - 1);
        let lo = k.saturating_sub(3);
        for &b in self.boundaries(tk, lo, hi).iter().rev() {
            let c = self.prefix_count(tk, b);
            if c <= max {
                return (b, c);
            }
        }
        // Below the window: the piece starts, each a token boundary.
        for p in (0..lo).rev() {
            let b = self.starts[p];
            let c = self.prefix_count(tk, b);
            if c <= max {
                return (b, c);
            }
        }
        (0, 0)
    }

    /// KEEP_TAIL: the smallest token boundary (and character boundary) at
    /// or after `from` whose suffix counts at most `max`, with that count.
    fn tail(&self, tk: &Tokenizer, max: usize, from: usize) -> (usize, usize) {
        let len = self.text.len();
        if max == 0 || from >= len {
            return (len, 0);
        }
        let total = self.total();
        // The piece holding the first token of the last `max`.
        let k = self
            .before
            .partition_point(|&t| t < total.saturating_sub(max))
            .saturating_sub(1)
            .min(self.pieces() - 1);
        let lo = k.saturating_sub(3);
        let hi = (k + 3).min(self.pieces() - 1);
        for &b in &self.boundaries(tk, lo, hi) {
            if b < from {
                continue;
            }
            let c = self.suffix_count(tk, b);
            if c <= max {
                return (b, c);
            }
        }
        // Past the window: the piece starts, then the end.
        for p in hi + 1..self.pieces() {
            let b = self.starts[p];
            if b < from {
                continue;
            }
            let c = self.suffix_count(tk, b);
            if c <= max {
                return (b, c);
            }
        }
        (len, 0)
    }
}

/// `text`'s bytes as UTF-8, or an error naming `what` and the offset of the
/// first invalid byte.
pub fn utf8<'a>(bytes: &'a [u8], what: &dyn std::fmt::Display) -> Result<&'a str> {
    std::str::from_utf8(bytes).map_err(|e| {
        Error::InvalidArgument(format!(
            "{what} is not valid UTF-8 (invalid byte at offset {})",
            e.valid_up_to()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_many_splits_at_half_the_bytes_or_not_at_all() {
        let p = PARALLEL_BYTES;
        // Not split: one thread, one text, fewer bytes than the threshold.
        assert_eq!(split_point(&[p, p], 1), None);
        assert_eq!(split_point(&[2 * p], 2), None);
        assert_eq!(split_point(&[p / 2, p / 2 - 1], 2), None);
        assert_eq!(split_point(&[p / 2, p / 2], 2), Some(1));
        // The texts that fit in half the bytes, a text ending on the half
        // included.
        assert_eq!(split_point(&[p, p, 2 * p], 2), Some(2));
        assert_eq!(split_point(&[p, p + 1, 2 * p], 2), Some(1));
        assert_eq!(split_point(&[1, 1, 1, p], 2), Some(3));
        // At least one text on the calling thread, never all.
        assert_eq!(split_point(&[p, 1, 1], 2), Some(1));
        assert_eq!(split_point(&[0, 0, p], 2), Some(2));
    }
}
