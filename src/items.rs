//! The scored candidates, stored as parallel arrays (structure of arrays) so
//! that slicers work on indices and never clone item data.

use crate::error::{invalid, Error, Result};
use crate::kind::{self, KindTable, DEFAULT_KIND};

/// Largest number of items one set can hold (indices are stored as `u32`).
pub const MAX_ITEMS: usize = u32::MAX as usize;

/// The name of an item field in messages: "kinds[3]", or "kind" for one item.
/// A field of one pushed item, named as the call that pushed it spells it:
/// the single-item parameter (`score`) or the `push_many` array element
/// (`scores[3]`).
struct At<'a> {
    /// (parameter of `cupel_items_push`, array of `cupel_items_push_many`)
    field: (&'a str, &'a str),
    index: Option<usize>,
}

impl std::fmt::Display for At<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.index {
            Some(i) => write!(f, "{}[{i}]", self.field.1),
            None => f.write_str(self.field.0),
        }
    }
}

/// The read-only view a slicer gets of the items.
#[derive(Debug, Clone, Default)]
pub struct Items {
    tokens: Vec<i64>,
    scores: Vec<f64>,
    kinds: Vec<u32>,
    kind_table: KindTable,
}

/// One item to add, already converted from its C representation.
#[derive(Debug, Clone, Copy)]
pub struct NewItem<'a> {
    pub tokens: i64,
    pub score: f64,
    /// `None` is the default kind.
    pub kind: Option<&'a str>,
}

impl Items {
    pub fn new() -> Self {
        Self::default()
    }

    /// Validates one item; `at` names it in messages (e.g. "tokens[3]").
    fn check(item: &NewItem<'_>, index: Option<usize>) -> Result<()> {
        // Formatted only into an error message: no allocation per valid item.
        let at = |field| At { field, index };
        if item.tokens < 0 {
            return invalid!(
                "{} is {}; token counts must be >= 0",
                at(("tokens", "tokens")),
                item.tokens
            );
        }
        if !item.score.is_finite() {
            return invalid!(
                "{} is {}; scores must be finite",
                at(("score", "scores")),
                item.score
            );
        }
        if let Some(k) = item.kind {
            kind::validate(k, &at(("kind", "kinds")))?;
        }
        Ok(())
    }

    fn room_for(&self, count: usize) -> Result<()> {
        if count > MAX_ITEMS - self.len() {
            return invalid!(
                "count {count}: the item set holds {} items and cannot grow past {MAX_ITEMS}",
                self.len()
            );
        }
        Ok(())
    }

    /// Adds one item.
    pub fn push(&mut self, item: NewItem<'_>) -> Result<()> {
        Self::check(&item, None)?;
        self.room_for(1)?;
        self.push_unchecked(item);
        Ok(())
    }

    /// Adds all items or none: every item is validated before any is added.
    pub fn push_many(&mut self, items: &[NewItem<'_>]) -> Result<()> {
        self.push_each(items.len(), |i| Ok(items[i]))
    }

    /// Adds `count` items, item `i` being `item(i)`, all or nothing, in
    /// one pass: each item is checked and added; on the first bad one every
    /// item of the call (and every kind it interned) is taken back.
    pub fn push_each<'a>(
        &mut self,
        count: usize,
        mut item: impl FnMut(usize) -> Result<NewItem<'a>>,
    ) -> Result<()> {
        self.room_for(count)?;
        let reserve = |e| Error::Capacity(format!("cannot allocate room for {count} items: {e}"));
        self.tokens.try_reserve(count).map_err(reserve)?;
        self.scores.try_reserve(count).map_err(reserve)?;
        self.kinds.try_reserve(count).map_err(reserve)?;
        let (len, kinds) = (self.len(), self.kind_table.len());
        for i in 0..count {
            let checked = item(i).and_then(|it| Self::check(&it, Some(i)).map(|()| it));
            match checked {
                Ok(it) => self.push_unchecked(it),
                Err(e) => {
                    self.tokens.truncate(len);
                    self.scores.truncate(len);
                    self.kinds.truncate(len);
                    self.kind_table.truncate(kinds);
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    fn push_unchecked(&mut self, item: NewItem<'_>) {
        let kind = self.kind_table.intern(item.kind.unwrap_or(DEFAULT_KIND));
        self.tokens.push(item.tokens);
        // -0.0 and 0.0 are one score; store +0.0 so no ordering can tell them apart.
        self.scores.push(item.score + 0.0);
        self.kinds.push(kind);
    }

    pub fn clear(&mut self) {
        self.tokens.clear();
        self.scores.clear();
        self.kinds.clear();
        self.kind_table.clear();
    }

    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    #[inline]
    pub fn tokens(&self, i: u32) -> i64 {
        self.tokens[i as usize]
    }

    #[inline]
    pub fn score(&self, i: u32) -> f64 {
        self.scores[i as usize]
    }

    /// The interned kind id of item `i`.
    #[inline]
    pub fn kind(&self, i: u32) -> u32 {
        self.kinds[i as usize]
    }

    /// Every item's tokens, by index.
    pub fn tokens_slice(&self) -> &[i64] {
        &self.tokens
    }

    pub fn scores(&self) -> &[f64] {
        &self.scores
    }

    pub fn kind_table(&self) -> &KindTable {
        &self.kind_table
    }

    /// Test helper: items from (tokens, score, kind) triples.
    #[cfg(test)]
    pub(crate) fn from_spec(spec: &[(i64, f64, &str)]) -> Items {
        let mut items = Items::new();
        for &(tokens, score, kind) in spec {
            let item = NewItem {
                tokens,
                score,
                kind: Some(kind),
            };
            items.push(item).unwrap();
        }
        items
    }

    /// Sum of the tokens of `indices`, saturating at `i64::MAX`.
    pub fn sum_tokens(&self, indices: &[u32]) -> i64 {
        indices
            .iter()
            .fold(0i64, |acc, &i| acc.saturating_add(self.tokens(i)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(tokens: i64, score: f64, kind: Option<&str>) -> NewItem<'_> {
        NewItem {
            tokens,
            score,
            kind,
        }
    }

    #[test]
    fn push_many_is_all_or_nothing() {
        let mut s = Items::new();
        s.push(item(1, 0.5, None)).unwrap();
        let batch = [
            item(1, 0.1, Some("a")),
            item(2, f64::NAN, Some("b")),
            item(3, 0.3, Some("c")),
        ];
        let err = s.push_many(&batch).unwrap_err();
        assert_eq!(
            err,
            Error::InvalidArgument("scores[1] is NaN; scores must be finite".into())
        );
        assert_eq!(s.len(), 1);
        assert_eq!(
            s.kind_table().len(),
            1,
            "no kind of the failed batch is interned"
        );
        // The caches forgot the rolled-back kinds too: "b" and "a" get fresh ids.
        s.push(item(4, 0.4, Some("b"))).unwrap();
        s.push(item(5, 0.5, Some("A"))).unwrap();
        assert_eq!(s.kind_table().len(), 3);
        assert_eq!(s.kind_table().name(1), "b");
        assert_eq!(s.kind_table().name(2), "A");
    }

    #[test]
    fn negative_zero_score_is_stored_as_zero() {
        let mut s = Items::new();
        s.push(item(1, -0.0, None)).unwrap();
        assert!(s.score(0).is_sign_positive());
    }

    #[test]
    fn bad_values_are_rejected_with_their_name() {
        let mut s = Items::new();
        let e = s.push(item(-5, 0.1, None)).unwrap_err();
        assert!(e.to_string().contains("tokens is -5"), "{e}");
        let e = s.push(item(5, f64::INFINITY, None)).unwrap_err();
        assert!(e.to_string().contains("score is inf;"), "{e}");
        let e = s.push(item(5, 0.1, Some("  "))).unwrap_err();
        assert!(e.to_string().contains("kind \"  \" is empty"), "{e}");
        assert!(s.is_empty());
    }
}
