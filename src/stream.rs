//! StreamSlice (supplement 7): items arrive one at a time and are decided a
//! batch at a time against a target budget.
//!
//! Groups (docs/groups.md): the members of a keep-together group are
//! pushed one after another; the group ends at the next push with another
//! group (or none). It is one candidate of its batch, with its summed
//! tokens and score, taken whole or not at all; a batch closes only between
//! candidates, so a group is never split across batches.

use std::collections::HashSet;

use crate::error::{invalid, Result};
use crate::sort::{desc_key, key_position};

/// Default batch size.
pub const DEFAULT_BATCH_SIZE: usize = 32;

/// One candidate of a batch: an item, or a whole group of consecutive items.
#[derive(Debug, Clone, Copy)]
struct Cand {
    tokens: i64,
    score: f64,
    /// Index of its first item; its items are `first .. first + count`.
    first: u64,
    count: u64,
}

#[derive(Debug, Clone)]
pub struct Stream {
    remaining: i64,
    batch_size: usize,
    /// The pending batch; its last candidate is still growing when `open`.
    batch: Vec<Cand>,
    /// Sort keys of the batch being decided, kept to reuse their memory.
    keys: Vec<u128>,
    pushed: u64,
    full: bool,
    finished: bool,
    taken: Vec<u64>,
    /// The group of the last pushed item, if it had one (it may continue).
    open: Option<u64>,
    /// Groups that ended: another push came after their last member.
    ended: HashSet<u64>,
}

impl Stream {
    /// `batch_size` 0 means the default. A target <= 0 takes nothing.
    pub fn new(target_tokens: i64, batch_size: usize) -> Self {
        let batch_size = if batch_size == 0 {
            DEFAULT_BATCH_SIZE
        } else {
            batch_size
        };
        Stream {
            remaining: target_tokens,
            batch_size,
            batch: Vec::with_capacity(batch_size.min(1024)),
            keys: Vec::new(),
            pushed: 0,
            full: target_tokens <= 0,
            finished: false,
            taken: Vec::new(),
            open: None,
            ended: HashSet::new(),
        }
    }

    /// Whether the budget is spent (the producer should stop).
    pub fn is_full(&self) -> bool {
        self.full
    }

    /// Offers one item (its index is the push order). An item pushed once the
    /// stream is full is counted but never taken. Returns `is_full()`.
    pub fn push(&mut self, tokens: i64, score: f64) -> Result<bool> {
        self.push_grouped(tokens, score, 0)
    }

    /// [`Stream::push`] for a member of keep-together group `group` (0:
    /// none). Refused, the stream unchanged, when `group` ended earlier or
    /// its tokens would sum past `i64::MAX`.
    pub fn push_grouped(&mut self, tokens: i64, score: f64, group: u64) -> Result<bool> {
        if self.finished {
            return invalid!("the stream is finished; it accepts no more pushes");
        }
        if tokens < 0 {
            return invalid!("tokens is {tokens}; token counts must be >= 0");
        }
        if !score.is_finite() {
            return invalid!("score is {score}; scores must be finite");
        }
        let joins = group != 0 && self.open == Some(group);
        if group != 0 && !joins && self.ended.contains(&group) {
            return invalid!(
                "group is {group}, which ended before item {}: a group's members must be \
                 pushed one after another",
                self.pushed
            );
        }
        let last = self.batch.last_mut().filter(|_| joins && !self.full);
        if let Some(last) = &last {
            if last.tokens.checked_add(tokens).is_none() {
                return invalid!(
                    "tokens is {tokens}: group {group}'s tokens ({} so far) would sum past \
                     INT64_MAX",
                    last.tokens
                );
            }
        }
        self.pushed += 1;
        if let Some(last) = last {
            last.tokens += tokens;
            last.score = crate::group::saturating_sum(last.score, score);
            last.count += 1;
            return Ok(self.full);
        }
        if joins {
            // A member of a group pushed while the stream was full.
            return Ok(true);
        }
        // The last candidate (if a group) is complete: close it.
        if let Some(ended) = self.open.take() {
            self.ended.insert(ended);
            self.close_candidate();
        }
        if group != 0 {
            self.open = Some(group);
        }
        if self.full {
            return Ok(true);
        }
        self.batch.push(Cand {
            tokens,
            score,
            first: self.pushed - 1,
            count: 1,
        });
        if group == 0 {
            self.close_candidate();
        }
        Ok(self.full)
    }

    /// The last candidate of the batch is complete: decide the batch if it
    /// is full.
    fn close_candidate(&mut self) {
        if !self.full && self.batch.len() >= self.batch_size {
            self.process_batch();
            if self.remaining <= 0 {
                self.full = true;
            }
        }
    }

    fn process_batch(&mut self) {
        decide(
            &self.batch,
            &mut self.remaining,
            &mut self.keys,
            &mut self.taken,
        );
        self.batch.clear();
    }

    /// How many indices [`Stream::finish`] will return, without finishing:
    /// a caller can check its buffer first and leave the stream as it was.
    pub fn finish_len(&self) -> usize {
        // A pending candidate means budget remains: a batch that spends it
        // makes the stream full, and a full stream batches nothing more
        // (`finish` empties the batch too).
        if self.batch.is_empty() {
            return self.taken.len();
        }
        let mut last = Vec::new();
        decide(
            &self.batch,
            &mut self.remaining.clone(),
            &mut Vec::new(),
            &mut last,
        );
        self.taken.len() + last.len()
    }

    /// Decides the partial last batch (if budget remains) and returns the
    /// taken item indices in the order they were taken. Idempotent.
    pub fn finish(&mut self) -> &[u64] {
        if !self.finished {
            if !self.batch.is_empty() {
                self.process_batch();
            }
            self.batch = Vec::new();
            self.keys = Vec::new();
            self.ended = HashSet::new();
            self.open = None;
            self.finished = true;
        }
        &self.taken
    }
}

/// Decides one batch: in score order, each candidate taken while it fits
/// `remaining` (zero-token ones always), a group's items all together.
/// `keys` is scratch for the sort keys.
fn decide(batch: &[Cand], remaining: &mut i64, keys: &mut Vec<u128>, taken: &mut Vec<u64>) {
    keys.clear();
    keys.extend(
        batch
            .iter()
            .enumerate()
            .map(|(p, c)| desc_key(c.score, p as u32)),
    );
    keys.sort_unstable();
    for &key in keys.iter() {
        let c = batch[key_position(key) as usize];
        if c.tokens == 0 || c.tokens <= *remaining {
            taken.extend(c.first..c.first + c.count);
            *remaining -= c.tokens;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finish_len_tells_the_count_without_finishing() {
        // Every stream state: full batches decided, a partial batch pending,
        // the budget spent or not.
        for target in [0, 50, 150, 250, 1000] {
            for pushed in 0..8u32 {
                let mut s = Stream::new(target, 3);
                for i in 0..pushed {
                    s.push(40 + 30 * (i as i64 % 3), (i % 5) as f64 / 5.0)
                        .unwrap();
                }
                let len = s.finish_len();
                assert!(s.push(10, 0.5).is_ok(), "finish_len does not finish");
                let mut t = Stream::new(target, 3);
                for i in 0..pushed {
                    t.push(40 + 30 * (i as i64 % 3), (i % 5) as f64 / 5.0)
                        .unwrap();
                }
                assert_eq!(t.finish_len(), len);
                assert_eq!(t.finish().len(), len, "target {target}, {pushed} pushed");
                assert_eq!(t.finish_len(), len, "and after finishing");
            }
        }
    }

    #[test]
    fn batches_are_decided_by_score() {
        let mut s = Stream::new(250, 3);
        assert!(!s.push(100, 0.1).unwrap());
        assert!(!s.push(100, 0.9).unwrap());
        // batch [0.1, 0.9, 0.5] -> take 1 (100), 2 (100), 0 does not fit (50 left)
        assert!(!s.push(100, 0.5).unwrap());
        assert!(!s.push(50, 0.2).unwrap());
        assert_eq!(s.finish(), &[1, 2, 3]);
        assert!(s.push(1, 0.1).is_err(), "no pushes after finish");
        assert_eq!(s.finish(), &[1, 2, 3], "finish is idempotent");
    }

    #[test]
    fn stream_turns_full_after_a_batch_spends_the_budget() {
        let mut s = Stream::new(200, 2);
        assert!(!s.push(100, 0.5).unwrap());
        assert!(s.push(100, 0.4).unwrap());
        assert!(s.push(0, 0.9).unwrap(), "a full stream stays full");
        assert_eq!(s.finish(), &[0, 1]);
    }

    #[test]
    fn zero_token_items_are_taken_while_not_full() {
        let mut s = Stream::new(10, 4);
        for (t, sc) in [(20, 0.9), (0, 0.1), (10, 0.5)] {
            s.push(t, sc).unwrap();
        }
        assert_eq!(s.finish(), &[2, 1]);
    }

    #[test]
    fn non_positive_target_takes_nothing() {
        let mut s = Stream::new(0, 0);
        assert!(s.push(0, 0.5).unwrap());
        assert!(s.finish().is_empty());
        let mut s = Stream::new(-5, 1);
        assert!(s.push(0, 0.5).unwrap());
        assert!(s.finish().is_empty());
    }

    #[test]
    fn partial_batch_is_skipped_once_budget_is_spent() {
        let mut s = Stream::new(100, 2);
        assert!(!s.is_full(), "a stream with budget is not full");
        s.push(60, 0.5).unwrap();
        assert!(!s.is_full(), "nor while its first batch is pending");
        s.push(40, 0.4).unwrap(); // batch taken: remaining 0 -> full
        assert!(s.is_full());
        assert_eq!(s.finish(), &[0, 1]);
    }

    #[test]
    fn invalid_values_are_rejected() {
        let mut s = Stream::new(100, 2);
        assert!(s.push(-1, 0.5).is_err());
        assert!(s.push(1, f64::NAN).is_err());
        assert!(s.push(1, 0.5).is_ok());
        assert_eq!(s.finish(), &[0], "rejected pushes take no index");
    }
}
