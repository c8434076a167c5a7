//! Helpers for this crate's tests, its integration tests, benchmarks and
//! fuzz driver (not part of the library's API): one seeded generator for
//! all of them. The spec-literal knapsack DP they check against is
//! [`crate::slicer::knapsack::reference`].

/// splitmix64: small, seedable, good enough for test data.
#[derive(Debug, Clone)]
pub struct Rng(pub u64);

impl Rng {
    #[allow(clippy::should_implement_trait)] // a generator, not an iterator: it never ends
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

const REALISTIC_KINDS: [&str; 5] = [
    "Message",
    "Document",
    "ToolOutput",
    "Memory",
    "SystemPrompt",
];
const WORDS: [&str; 16] = [
    "the",
    "request",
    "failed",
    "because",
    "token",
    "expired",
    "retry",
    "with",
    "a",
    "new",
    "session",
    "log:",
    "ERROR",
    "at",
    "auth.rs:42",
    "ok",
];

/// `n` realistic items (issue 30's benchmarks and instruction-count guard):
/// contents of 50-2,000 bytes of words, one in ten repeating an earlier
/// content, a token a 4 bytes, scores in [0, 1), timestamps, a priority on
/// one in three, five kinds; and the contents.
pub fn realistic(n: usize, seed: u64) -> (crate::Items, Vec<String>) {
    let mut rng = Rng(seed);
    let mut items = crate::Items::new();
    let mut contents: Vec<String> = Vec::with_capacity(n);
    for i in 0..n {
        let text = if i > 0 && rng.below(10) == 0 {
            contents[rng.below(i as u64) as usize].clone()
        } else {
            let len = 50 + rng.below(1951) as usize;
            let mut t = String::with_capacity(len + 12);
            while t.len() < len {
                t.push_str(WORDS[rng.below(16) as usize]);
                t.push(' ');
            }
            t.truncate(len);
            t
        };
        let kind = Some(REALISTIC_KINDS[rng.below(5) as usize]);
        let tokens = (text.len() / 4).max(1) as i64;
        let score = rng.below(1000) as f64 / 1000.0;
        items
            .push(crate::NewItem {
                tokens,
                score,
                kind,
            })
            .unwrap();
        items.set_content(i, &text).unwrap();
        items
            .set_timestamp(i, 1_700_000_000_000 + rng.below(1 << 32) as i64)
            .unwrap();
        if rng.below(3) == 0 {
            items.set_priority(i, rng.below(10) as i64).unwrap();
        }
        contents.push(text);
    }
    (items, contents)
}
