//! Byte-pair encoding of one piece against a vocabulary, as tiktoken does
//! it: start from the piece's single bytes; while some two neighbouring
//! parts together form a token, merge the pair whose token has the lowest
//! rank (the leftmost pair among equal ranks); the parts left are the
//! tokens. A piece that is a token as a whole is that one token.
//!
//! Short pieces (almost all of them) merge in a small array, scanning for
//! the lowest rank as tiktoken does; long ones (a megabyte of one letter is
//! one piece) keep their pairs in a heap, so the work is O(n log n) and not
//! quadratic.

use super::vocab::Vocab;

/// Pieces up to this many bytes merge in an array on the stack.
const SMALL: usize = 48;

/// No token: a pair that cannot merge.
const NONE: u32 = u32::MAX;

/// The number of tokens of `piece`.
#[inline]
pub fn count(vocab: &Vocab, piece: &[u8]) -> usize {
    if piece.len() <= 1 {
        return piece.len();
    }
    if vocab.rank(piece).is_some() {
        return 1;
    }
    let mut n = 0;
    merge(vocab, piece, |_| n += 1);
    n
}

/// The number of tokens of `piece`, known to be no token as a whole and
/// at least two bytes long.
#[inline]
pub fn count_merged(vocab: &Vocab, piece: &[u8]) -> usize {
    let mut n = 0;
    merge(vocab, piece, |_| n += 1);
    n
}

/// Calls `end(e)` with the end offset (within `piece`) of each of its
/// tokens, in order; the last is `piece.len()`.
pub fn split(vocab: &Vocab, piece: &[u8], mut end: impl FnMut(usize)) {
    if piece.len() <= 1 || vocab.rank(piece).is_some() {
        if !piece.is_empty() {
            end(piece.len());
        }
        return;
    }
    merge(vocab, piece, end)
}

/// The merges of a piece of two bytes or more, then `end` for each part.
fn merge(vocab: &Vocab, piece: &[u8], end: impl FnMut(usize)) {
    if piece.len() <= SMALL {
        merge_small(vocab, piece, end)
    } else if piece.len() <= LONG {
        merge_heap(vocab, piece, end)
    } else {
        merge_long(vocab, piece, end)
    }
}

/// Pieces longer than this are encoded in chunks (see [`merge_long`]).
const LONG: usize = 1024;

/// The chunk length of [`merge_long`].
const CHUNK: usize = 256;

/// Whether two tokens, side by side, stay two tokens: the merges of their
/// bytes together end exactly between them. (The encoding of a text is
/// the one sequence of tokens that covers it and whose neighbours are all
/// compatible so; the encoding of a piece always is.)
fn compatible(vocab: &Vocab, piece: &[u8], split: usize) -> bool {
    #[cfg(test)]
    work::CHECKS.with(|c| c.set(c.get() + 1));
    if vocab.rank(piece).is_some() {
        return false;
    }
    let mut ends = [0usize; 3];
    let mut n = 0;
    merge(vocab, piece, |e| {
        if n < 3 {
            ends[n] = e;
        }
        n += 1;
    });
    n == 2 && ends[0] == split
}

/// A long piece (a megabyte of one letter is one piece): encoded chunk by
/// chunk, each with its own small heap, then stitched. Tokens move one by
/// one onto the output; a token that begins a chunk (or follows a stretch
/// encoded again) is checked for compatibility with the token before it,
/// the others are compatible with theirs by construction. Where a pair
/// fails, the tokens around the seam are encoded again as one stretch (twice
/// as wide each time it fails again) and the stretch's tokens go back in
/// front of the rest. When it is done every neighbouring pair of the output
/// is compatible, which makes it the encoding of the piece; the chunks'
/// heaps stay in cache where one heap over the whole piece would not.
fn merge_long(vocab: &Vocab, piece: &[u8], mut end: impl FnMut(usize)) {
    let n = piece.len();
    // Repetitive text (a run of one character, a separator line) gives the
    // same chunks and the same seams over and over: the last few of each
    // are remembered, by their exact bytes.
    let mut chunks = Memo::<Vec<usize>>::default();
    let mut seams = Memo::<bool>::default();
    // Encodes piece[a..b] onto `next` (a stack: last token first), its first
    // token marked to be checked.
    let mut encode = |a: usize, b: usize, next: &mut Vec<(usize, bool)>| {
        let ends = chunks.get_or(&piece[a..b], 0, || {
            #[cfg(test)]
            work::ENCODES.with(|c| c.set(c.get() + 1));
            #[cfg(test)]
            work::BYTES.with(|c| c.set(c.get() + b - a));
            let mut ends = Vec::new();
            merge_heap(vocab, &piece[a..b], |e| ends.push(e));
            ends
        });
        let first = ends.len() - 1;
        next.extend(
            ends.iter()
                .rev()
                .enumerate()
                .map(|(k, &e)| (a + e, k == first)),
        );
    };
    let mut next: Vec<(usize, bool)> = Vec::with_capacity(n / 2);
    for a in (0..n).step_by(CHUNK).rev() {
        encode(a, (a + CHUNK).min(n), &mut next);
    }
    // The output: token ends, every neighbouring pair compatible.
    let mut out: Vec<usize> = Vec::with_capacity(n / 2);
    let mut width = 1;
    while let Some((e, check)) = next.pop() {
        let Some(&prev_end) = out.last() else {
            out.push(e);
            continue;
        };
        let prev_start = if out.len() >= 2 {
            out[out.len() - 2]
        } else {
            0
        };
        let split = prev_end - prev_start;
        let pair = &piece[prev_start..e];
        if !check || *seams.get_or(pair, split, || compatible(vocab, pair, split)) {
            out.push(e);
            if check {
                width = 1;
            }
            continue;
        }
        // Encode again from `width` tokens back to `width` tokens on.
        let back = out.len().saturating_sub(width);
        let from = if back == 0 { 0 } else { out[back - 1] };
        out.truncate(back);
        let mut to = e;
        for _ in 1..width {
            match next.pop() {
                Some((x, _)) => to = x,
                None => break,
            }
        }
        // The token after the stretch gets a new neighbour: check it.
        if let Some(last) = next.last_mut() {
            last.1 = true;
        }
        encode(from, to, &mut next);
        width *= 2;
    }
    for e in out {
        end(e);
    }
}

/// Work counters for the tests that hold `merge_long` to its cost.
#[cfg(test)]
mod work {
    use std::cell::Cell;
    thread_local! {
        /// Stretches encoded with the heap (memo misses).
        pub static ENCODES: Cell<usize> = const { Cell::new(0) };
        /// Compatibility checks computed (memo misses).
        pub static CHECKS: Cell<usize> = const { Cell::new(0) };
        /// Bytes of the stretches encoded with the heap.
        pub static BYTES: Cell<usize> = const { Cell::new(0) };
    }

    /// (encodes, checks, bytes encoded) since the last call.
    pub fn take() -> (usize, usize, usize) {
        (
            ENCODES.with(|c| c.replace(0)),
            CHECKS.with(|c| c.replace(0)),
            BYTES.with(|c| c.replace(0)),
        )
    }
}

/// The last few results of a function of a byte string (and a number),
/// most recent first: repetitive text asks the same questions in a row.
struct Memo<T> {
    entries: Vec<(Vec<u8>, usize, T)>,
}

impl<T> Default for Memo<T> {
    fn default() -> Self {
        Memo {
            entries: Vec::new(),
        }
    }
}

impl<T> Memo<T> {
    const SIZE: usize = 16;

    /// `f()`'s value for (`key`, `k`), computed once while remembered.
    fn get_or(&mut self, key: &[u8], k: usize, f: impl FnOnce() -> T) -> &T {
        match self
            .entries
            .iter()
            .position(|(b, j, _)| *j == k && b == key)
        {
            Some(i) => {
                let hit = self.entries.remove(i);
                self.entries.insert(0, hit);
            }
            None => {
                self.entries.truncate(Self::SIZE - 1);
                self.entries.insert(0, (key.to_vec(), k, f()));
            }
        }
        &self.entries[0].2
    }
}

/// tiktoken's loop, in arrays: `starts[..m]` are the parts' starts (and
/// the piece's end last), `ranks[i]` the rank of parts i and i + 1 together.
fn merge_small(vocab: &Vocab, piece: &[u8], mut end: impl FnMut(usize)) {
    let n = piece.len();
    // starts[..=parts]: the parts' starts, then the piece's end.
    let mut starts = [0u8; SMALL + 1];
    for (i, s) in starts.iter_mut().enumerate().take(n + 1) {
        *s = i as u8;
    }
    let mut parts = n;
    // The rank of parts i and i + 1 together; NONE for the last part.
    let pair = |starts: &[u8], parts: usize, i: usize| -> u32 {
        if i + 1 < parts {
            vocab
                .rank(&piece[starts[i] as usize..starts[i + 2] as usize])
                .unwrap_or(NONE)
        } else {
            NONE
        }
    };
    let mut ranks = [NONE; SMALL];
    for (i, r) in ranks[..parts].iter_mut().enumerate() {
        *r = pair(&starts, parts, i);
    }
    loop {
        // The lowest rank, leftmost among equals.
        let mut best = NONE;
        let mut at = 0;
        for (i, &r) in ranks[..parts].iter().enumerate() {
            if r < best {
                best = r;
                at = i;
            }
        }
        if best == NONE {
            break;
        }
        // Parts `at` and `at + 1` become one: drop start `at + 1`.
        starts.copy_within(at + 2..=parts, at + 1);
        ranks.copy_within(at + 1..parts, at);
        parts -= 1;
        ranks[at] = pair(&starts, parts, at);
        if at > 0 {
            ranks[at - 1] = pair(&starts, parts, at - 1);
        }
    }
    for &s in &starts[1..=parts] {
        end(s as usize);
    }
}

/// The same merges for long pieces: parts in a linked list, candidate pairs
/// in a min-heap keyed by (rank, start), stale entries skipped when popped.
fn merge_heap(vocab: &Vocab, piece: &[u8], mut end: impl FnMut(usize)) {
    let n = piece.len();
    // Part i starts at byte i while alive; next[i] is the next part's start
    // (n for the last); prev[i] the previous part's start.
    let mut next: Vec<u32> = (1..=n as u32).collect();
    let mut prev: Vec<u32> = (0..n as u32).map(|i| i.wrapping_sub(1)).collect();
    // rank[i]: the rank of part i merged with its next part (NONE if none).
    let mut rank = vec![NONE; n];
    let pair = |next: &[u32], i: usize| -> u32 {
        let j = next[i] as usize;
        if j >= n {
            return NONE;
        }
        vocab.rank(&piece[i..next[j] as usize]).unwrap_or(NONE)
    };
    let key = |r: u32, i: usize| ((r as u64) << 32) + i as u64;
    let mut initial = Vec::with_capacity(n);
    for (i, slot) in rank.iter_mut().enumerate() {
        let r = pair(&next, i);
        *slot = r;
        if r != NONE {
            initial.push(key(r, i));
        }
    }
    let mut heap = Heap::from(initial);
    while let Some(k) = heap.pop() {
        let (r, i) = ((k >> 32) as u32, (k & 0xffff_ffff) as usize);
        if rank[i] != r {
            continue; // stale: part i merged or its pair changed since
        }
        // Merge part i with its next part j.
        let j = next[i] as usize;
        let k = next[j] as usize;
        next[i] = k as u32;
        if k < n {
            prev[k] = i as u32;
        }
        rank[j] = NONE;
        let r = pair(&next, i);
        rank[i] = r;
        if r != NONE {
            heap.push(key(r, i));
        }
        let p = prev[i];
        if p != u32::MAX {
            let p = p as usize;
            let r = pair(&next, p);
            rank[p] = r;
            if r != NONE {
                heap.push(key(r, p));
            }
        }
    }
    let mut i = 0;
    while i < n {
        i = next[i] as usize;
        end(i);
    }
}

/// A 4-ary min-heap of keys: half the depth of a binary heap, and the four
/// children it compares share a cache line.
struct Heap(Vec<u64>);

impl Heap {
    /// A heap of `keys`, built in O(n).
    fn from(keys: Vec<u64>) -> Heap {
        let mut h = Heap(keys);
        // Every key from the last (a leaf sifts nowhere, at once).
        for i in (0..h.0.len()).rev() {
            h.down(i);
        }
        h
    }

    fn push(&mut self, key: u64) {
        let v = &mut self.0;
        let mut i = v.len();
        v.push(key);
        while i > 0 {
            let parent = (i - 1) / 4;
            if v[parent] <= key {
                break;
            }
            v[i] = v[parent];
            i = parent;
        }
        v[i] = key;
    }

    fn pop(&mut self) -> Option<u64> {
        let last = self.0.pop()?;
        if self.0.is_empty() {
            return Some(last);
        }
        let top = std::mem::replace(&mut self.0[0], last);
        self.down(0);
        Some(top)
    }

    /// Sifts the key at `i` down to its place.
    fn down(&mut self, mut i: usize) {
        let v = &mut self.0;
        let n = v.len();
        let key = v[i];
        loop {
            let first = 4 * i + 1;
            if first >= n {
                break;
            }
            let mut best = first;
            for c in first + 1..(first + 4).min(n) {
                if v[c] < v[best] {
                    best = c;
                }
            }
            if v[best] >= key {
                break;
            }
            v[i] = v[best];
            i = best;
        }
        v[i] = key;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// tiktoken's merge loop as written: a vector of parts, rescanned for
    /// the lowest rank after each merge. The oracle for both paths.
    fn reference(vocab: &Vocab, piece: &[u8]) -> Vec<usize> {
        if vocab.rank(piece).is_some() {
            return vec![piece.len()];
        }
        let mut starts: Vec<usize> = (0..=piece.len()).collect();
        loop {
            let mut best: Option<(u32, usize)> = None;
            for i in 0..starts.len().saturating_sub(2) {
                if let Some(r) = vocab.rank(&piece[starts[i]..starts[i + 2]]) {
                    if best.is_none_or(|(b, _)| r < b) {
                        best = Some((r, i));
                    }
                }
            }
            match best {
                Some((_, i)) => {
                    starts.remove(i + 1);
                }
                None => return starts[1..].to_vec(),
            }
        }
    }

    /// A vocabulary of the 256 bytes and `merges` built left to right.
    fn vocab(merges: &[&str]) -> Vocab {
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        for m in merges {
            tokens.push(m.as_bytes().to_vec());
        }
        Vocab::from_compact(super::super::vocab::test_compact(&tokens)).unwrap()
    }

    fn ends(v: &Vocab, piece: &[u8]) -> Vec<usize> {
        let mut e = Vec::new();
        split(v, piece, |x| e.push(x));
        assert_eq!(count(v, piece), e.len());
        e
    }

    #[test]
    fn merges_follow_rank_then_position() {
        let v = vocab(&["ab", "bc", "abc", "cd", "abcd", "aa", "aaaa"]);
        assert_eq!(ends(&v, b"abcd"), vec![4]); // a token as a whole
        assert_eq!(ends(&v, b"bcd"), vec![2, 3]); // bc (rank 257) before cd (259)
        assert_eq!(ends(&v, b"abcab"), vec![3, 5]);
        assert_eq!(ends(&v, b"aaaaa"), vec![4, 5]); // leftmost pairs first
        assert_eq!(ends(&v, b"xyz"), vec![1, 2, 3]);
        assert_eq!(ends(&v, b""), Vec::<usize>::new());
        assert_eq!(ends(&v, b"q"), vec![1]);
    }

    #[test]
    fn both_paths_agree_with_the_reference_on_seeded_pieces() {
        let v = vocab(&[
            "ab", "ba", "aa", "bb", "abab", "aab", "bba", "aaaa", "ac", "ca", "abc", "cab", "bbbb",
            "abba", "baab", "cc", "acca",
        ]);
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut rnd = |k: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % k
        };
        for round in 0..4000 {
            let len = if round % 10 == 0 {
                40 + rnd(400)
            } else {
                2 + rnd(60)
            } as usize;
            let piece: Vec<u8> = (0..len)
                .map(|_| b"abcx"[rnd(if round % 3 == 0 { 2 } else { 4 }) as usize])
                .collect();
            let want = reference(&v, &piece);
            let mut got = Vec::new();
            merge(&v, &piece, |e| got.push(e));
            if v.rank(&piece).is_none() {
                assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&piece));
            }
            // Each path on its own, whatever the length.
            if piece.len() <= SMALL {
                let mut small = Vec::new();
                merge_small(&v, &piece, |e| small.push(e));
                let mut heap = Vec::new();
                merge_heap(&v, &piece, |e| heap.push(e));
                if v.rank(&piece).is_none() {
                    assert_eq!(small, want);
                    assert_eq!(heap, want);
                }
            }
            assert_eq!(ends(&v, &piece), want);
        }
    }

    #[test]
    fn long_pieces_in_chunks_equal_the_whole_heap_with_the_real_vocabularies() {
        let mut state = 0x0005_DEEC_E66D_u64;
        let mut rnd = |k: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % k
        };
        for name in ["o200k_base", "cl100k_base"] {
            let v = crate::text::vocab::builtin(name).unwrap();
            let alphabets: [&[&str]; 6] = [
                &["a"],
                &["a", "b"],
                &["ab", "ba", "a", "aa"],
                &[" "],
                &["漢", "字", "の"],
                &["e", "t", "a", "o", "i", "n", "s", "h", "r"],
            ];
            for alphabet in alphabets {
                for _ in 0..6 {
                    let len = LONG + rnd(6000) as usize;
                    let mut piece = Vec::new();
                    while piece.len() < len {
                        piece.extend_from_slice(
                            alphabet[rnd(alphabet.len() as u64) as usize].as_bytes(),
                        );
                    }
                    let (mut heap, mut long) = (Vec::new(), Vec::new());
                    merge_heap(&v, &piece, |e| heap.push(e));
                    merge_long(&v, &piece, |e| long.push(e));
                    assert_eq!(long, heap, "{name}: {} bytes of {alphabet:?}", piece.len());
                }
            }
        }
    }

    #[test]
    fn long_pieces_encode_each_chunk_once_and_check_each_seam_once() {
        let v = crate::text::vocab::builtin("o200k_base").unwrap();
        let mut x = 0x2545_F491u64;
        let word: Vec<u8> = (0..64 * 1024)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                b"etaoinshrdlu"[(x % 12) as usize]
            })
            .collect();
        let chunks = word.len().div_ceil(CHUNK);
        work::take();
        let mut ends = Vec::new();
        merge(&v, &word, |e| ends.push(e));
        let (encodes, checks, bytes) = work::take();
        eprintln!("{chunks} chunks: {encodes} encodes of {bytes} bytes, {checks} checks");
        // Each chunk once; a seam cut inside a token (most are) is repaired
        // by encoding again the few bytes of the two tokens around it; one
        // check per seam and per repair.
        assert!(
            encodes >= chunks && encodes <= 2 * chunks,
            "{encodes} encodes"
        );
        assert!(
            checks >= chunks - 1 && checks <= 3 * chunks,
            "{checks} checks"
        );
        assert!(
            bytes <= word.len() + word.len() / 10,
            "{bytes} bytes encoded"
        );
        let mut heap = Vec::new();
        merge_heap(&v, &word, |e| heap.push(e));
        assert_eq!(ends, heap);
        // A run: one chunk encoded for them all, one seam checked for all.
        merge(&v, &[b'a'; 32 * CHUNK], |_| {});
        let (encodes, checks, _) = work::take();
        assert!(
            encodes <= 3 && checks <= 3,
            "{encodes} encodes, {checks} checks"
        );
        // Only pieces past LONG go by chunks.
        merge(&v, &word[..LONG], |_| {});
        assert_eq!(work::take(), (0, 0, 0));
        merge(&v, &word[..LONG + 1], |_| {});
        assert!(work::take().0 >= LONG.div_ceil(CHUNK));
    }

    #[test]
    fn compatibility_is_the_merge_ending_between_the_two() {
        let v = crate::text::vocab::builtin("o200k_base").unwrap();
        // " hello" then " world": two tokens.
        assert!(compatible(&v, b" hello world", 6));
        assert!(!compatible(&v, b" hello world", 5), "another split");
        // One token as a whole: not two.
        assert!(!compatible(&v, b"hello", 3));
        // Three tokens, or five: not two.
        assert!(!compatible(&v, b" hello world again", 6));
        assert!(!compatible(&v, b" hello world again and again", 6));
    }

    #[test]
    fn the_memo_keeps_the_most_recent_entries() {
        let mut m = Memo::<usize>::default();
        let mut calls = 0;
        for k in 0..Memo::<usize>::SIZE + 1 {
            assert_eq!(
                *m.get_or(&[k as u8], 0, || {
                    calls += 1;
                    k
                }),
                k
            );
        }
        assert_eq!(
            m.entries.len(),
            Memo::<usize>::SIZE,
            "the oldest entry goes"
        );
        assert_eq!(calls, Memo::<usize>::SIZE + 1);
        // A hit moves to the front, and computes nothing.
        assert_eq!(*m.get_or(&[5], 0, || unreachable!()), 5);
        assert_eq!(m.entries[0].0, vec![5]);
        // The same bytes with another number is another key; the evicted
        // first key is computed again.
        assert_eq!(*m.get_or(&[5], 1, || 99), 99);
        assert_eq!(*m.get_or(&[0], 0, || 42), 42);
    }

    #[test]
    fn a_long_run_of_one_byte_merges_in_near_linear_work() {
        let v = vocab(&["aa", "aaaa", "aaaaaaaa"]);
        let piece = vec![b'a'; 1 << 16];
        // 65,536 bytes: pairs of 8 (rank order: aa, aaaa, aaaaaaaa).
        assert_eq!(count(&v, &piece), 1 << 13);
        assert_eq!(
            count(&v, &piece[..SMALL + 3]),
            reference(&v, &piece[..SMALL + 3]).len()
        );
    }
}
