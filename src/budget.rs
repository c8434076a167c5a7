//! ContextBudget: validation and COMPUTE-EFFECTIVE-BUDGET (spec 002, supplement 3).

use crate::error::{invalid, Result};
use crate::kind;

/// A token budget. Every setter validates; a rejected change leaves it as it was.
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    max_tokens: i64,
    target_tokens: i64,
    output_reserve: i64,
    /// (folded kind, tokens), in the order kinds were first reserved.
    reserved_slots: Vec<(String, i64)>,
    safety_margin_percent: f64,
}

/// The budget a slicer sees: only `max` and `target` (spec 002).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SliceBudget {
    pub max: i64,
    pub target: i64,
}

impl Budget {
    pub fn new(max_tokens: i64, target_tokens: i64) -> Result<Self> {
        if max_tokens < 0 {
            return invalid!("max_tokens is {max_tokens}; it must be >= 0");
        }
        if target_tokens < 0 {
            return invalid!("target_tokens is {target_tokens}; it must be >= 0");
        }
        if target_tokens > max_tokens {
            return invalid!("target_tokens {target_tokens} > max_tokens {max_tokens}");
        }
        Ok(Budget {
            max_tokens,
            target_tokens,
            output_reserve: 0,
            reserved_slots: Vec::new(),
            safety_margin_percent: 0.0,
        })
    }

    pub fn max_tokens(&self) -> i64 {
        self.max_tokens
    }

    pub fn target_tokens(&self) -> i64 {
        self.target_tokens
    }

    pub fn output_reserve(&self) -> i64 {
        self.output_reserve
    }

    /// The reserved slots: (folded kind, tokens), in the order first reserved.
    pub fn reserved_slots(&self) -> &[(String, i64)] {
        &self.reserved_slots
    }

    pub fn safety_margin_percent(&self) -> f64 {
        self.safety_margin_percent
    }

    pub fn set_output_reserve(&mut self, tokens: i64) -> Result<()> {
        if tokens < 0 {
            return invalid!("output_reserve is {tokens}; it must be >= 0");
        }
        if tokens > self.max_tokens {
            return invalid!("output_reserve {tokens} > max_tokens {}", self.max_tokens);
        }
        self.output_reserve = tokens;
        Ok(())
    }

    pub fn set_safety_margin(&mut self, percent: f64) -> Result<()> {
        if !percent.is_finite() || !(0.0..=100.0).contains(&percent) {
            return invalid!(
                "safety margin percent is {percent}; it must be finite and in [0, 100]"
            );
        }
        // -0.0 passes the range check and behaves as 0.0 everywhere (the
        // value is only compared with `> 0.0` and divided), so no
        // normalisation: `negative_zero_safety_margin_is_no_margin`.
        self.safety_margin_percent = percent;
        Ok(())
    }

    /// Sets (or replaces) the reserved slot of `kind`.
    pub fn reserve(&mut self, kind: &str, tokens: i64) -> Result<()> {
        kind::validate(kind, &"kind")?;
        if tokens < 0 {
            return invalid!("reserved tokens for kind {kind:?} is {tokens}; it must be >= 0");
        }
        let key = kind::fold(kind);
        match self.reserved_slots.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = tokens,
            None => self.reserved_slots.push((key, tokens)),
        }
        Ok(())
    }

    /// The same budget with `max` and `target` reduced by `slack`, validated
    /// like any budget (GetMarginalItems' reduced budget).
    pub fn reduced_by(&self, slack: i64) -> Result<Budget> {
        if slack < 0 {
            return invalid!("slack_tokens is {slack}; it must be >= 0");
        }
        let max = self.max_tokens - slack;
        let target = self.target_tokens - slack;
        if target < 0 {
            return invalid!(
                "slack_tokens {slack} > target_tokens {}: the reduced budget would be negative",
                self.target_tokens
            );
        }
        if max < self.output_reserve {
            return invalid!(
                "slack_tokens {slack}: the reduced max_tokens {max} would be below output_reserve {}",
                self.output_reserve
            );
        }
        Ok(Budget {
            max_tokens: max,
            target_tokens: target,
            ..self.clone()
        })
    }

    /// COMPUTE-EFFECTIVE-BUDGET of spec 002 with `pinned_tokens` (>= 0).
    /// Exact for every input: sums are taken in 128 bits and the result is
    /// clamped to `[0, max_tokens]`.
    pub fn effective(&self, pinned_tokens: i64) -> Result<SliceBudget> {
        if pinned_tokens < 0 {
            return invalid!("pinned_tokens is {pinned_tokens}; it must be >= 0");
        }
        let reserved: i128 = self.reserved_slots.iter().map(|&(_, t)| t as i128).sum();
        let pinned = pinned_tokens as i128;
        let mut max =
            (self.max_tokens as i128 - self.output_reserve as i128 - pinned - reserved).max(0);
        let mut target = (self.target_tokens as i128 - pinned - reserved).max(0);
        target = target.min(max);
        // Both are now in [0, max_tokens], so they fit in i64.
        if self.safety_margin_percent > 0.0 {
            let multiplier = 1.0 - self.safety_margin_percent / 100.0;
            max = scale_floor(max as i64, multiplier) as i128;
            target = scale_floor(target as i64, multiplier) as i128;
            target = target.min(max);
        }
        Ok(SliceBudget {
            max: max as i64,
            target: target as i64,
        })
    }
}

/// floor(value * multiplier) for value >= 0 and multiplier in [0, 1], never
/// above `value` (the f64 product of a large value may round up).
fn scale_floor(value: i64, multiplier: f64) -> i64 {
    let scaled = (value as f64 * multiplier).floor();
    // `as` saturates; the min keeps float rounding from growing the budget.
    (scaled as i64).clamp(0, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eff(b: &Budget, pinned: i64) -> (i64, i64) {
        let e = b.effective(pinned).unwrap();
        (e.max, e.target)
    }

    #[test]
    fn validation_rules() {
        assert!(Budget::new(-1, 0).is_err());
        assert!(Budget::new(10, -1).is_err());
        let e = Budget::new(10, 11).unwrap_err();
        assert_eq!(e.to_string(), "target_tokens 11 > max_tokens 10");
        let mut b = Budget::new(100, 80).unwrap();
        assert!(b.set_output_reserve(101).is_err());
        assert!(b.set_output_reserve(-1).is_err());
        assert!(b.set_safety_margin(f64::NAN).is_err());
        assert!(b.set_safety_margin(100.0000001).is_err());
        assert!(b.set_safety_margin(-0.1).is_err());
        assert!(b.reserve("", 5).is_err());
        assert!(b.reserve("Memory", -5).is_err());
        assert_eq!(
            b,
            Budget::new(100, 80).unwrap(),
            "failed setters change nothing"
        );
    }

    #[test]
    fn effective_budget_formula() {
        let mut b = Budget::new(1000, 800).unwrap();
        assert_eq!(eff(&b, 0), (1000, 800));
        b.set_output_reserve(100).unwrap();
        assert_eq!(eff(&b, 0), (900, 800));
        assert_eq!(eff(&b, 150), (750, 650));
        b.reserve("Memory", 50).unwrap();
        b.reserve("memory", 60).unwrap(); // replaces, same folded kind
        b.reserve("Tool", 40).unwrap();
        assert_eq!(eff(&b, 150), (650, 550));
        b.set_safety_margin(10.0).unwrap();
        assert_eq!(eff(&b, 150), (585, 495));
        // target is clamped to max
        let mut c = Budget::new(1000, 1000).unwrap();
        c.set_output_reserve(300).unwrap();
        assert_eq!(eff(&c, 0), (700, 700));
        // pinned beyond the budget
        assert_eq!(eff(&c, 5000), (0, 0));
    }

    // The six tests below each kill a mutant cargo-mutants found surviving
    // (issue 16): a boundary that was never tested exactly.

    #[test]
    fn output_reserve_may_equal_max_tokens() {
        let mut b = Budget::new(1000, 800).unwrap();
        b.set_output_reserve(1000).unwrap();
        assert_eq!(b.output_reserve(), 1000);
        assert_eq!(eff(&b, 0), (0, 0));
        let e = b.set_output_reserve(1001).unwrap_err();
        assert_eq!(e.to_string(), "output_reserve 1001 > max_tokens 1000");
        assert_eq!(
            b.output_reserve(),
            1000,
            "a refused reserve changes nothing"
        );
    }

    #[test]
    fn reserving_a_second_kind_keeps_the_first() {
        let mut b = Budget::new(1000, 1000).unwrap();
        b.reserve("Memory", 100).unwrap();
        b.reserve("Tool", 30).unwrap();
        assert_eq!(eff(&b, 0), (870, 870), "both slots count");
        b.reserve("TOOL", 20).unwrap();
        assert_eq!(
            eff(&b, 0),
            (880, 880),
            "Tool's slot replaced, Memory's kept"
        );
        b.reserve("memory", 0).unwrap();
        assert_eq!(
            eff(&b, 0),
            (980, 980),
            "Memory's slot replaced, Tool's kept"
        );
    }

    #[test]
    fn a_zero_reservation_is_allowed() {
        let mut b = Budget::new(100, 100).unwrap();
        b.reserve("Memory", 0).unwrap();
        assert_eq!(eff(&b, 0), (100, 100));
        let e = b.reserve("Memory", -1).unwrap_err();
        assert!(e.to_string().contains("is -1; it must be >= 0"), "{e}");
    }

    #[test]
    fn reduced_max_may_equal_output_reserve() {
        let mut b = Budget::new(1000, 800).unwrap();
        b.set_output_reserve(300).unwrap();
        let r = b.reduced_by(700).unwrap();
        assert_eq!((r.max_tokens(), r.target_tokens()), (300, 100));
        assert_eq!(eff(&r, 0), (0, 0));
        let e = b.reduced_by(701).unwrap_err();
        assert!(e.to_string().contains("reduced max_tokens 299"), "{e}");
    }

    #[test]
    fn zero_safety_margin_leaves_large_budgets_exact() {
        // 2^62 + 1 has no f64 of its own: scaling it by 1.0 would give 2^62.
        let big = (1i64 << 62) + 1;
        let mut b = Budget::new(big, big - 2).unwrap();
        assert_eq!(eff(&b, 0), (big, big - 2));
        b.set_safety_margin(0.0).unwrap();
        assert_eq!(eff(&b, 0), (big, big - 2));
        b.set_safety_margin(50.0).unwrap();
        assert_eq!(eff(&b, 0), (1 << 61, 1 << 61));
    }

    #[test]
    fn negative_zero_safety_margin_is_no_margin() {
        let big = (1i64 << 62) + 1;
        let mut b = Budget::new(big, 999).unwrap();
        b.set_safety_margin(-0.0).unwrap();
        assert_eq!(eff(&b, 0), (big, 999));
        b.set_safety_margin(50.0).unwrap();
        assert_eq!(eff(&b, 0), (1 << 61, 499));
        b.set_safety_margin(-0.0).unwrap();
        assert_eq!(eff(&b, 0), (big, 999), "-0.0 replaces an earlier margin");
    }

    #[test]
    fn effective_budget_never_overflows() {
        let mut b = Budget::new(i64::MAX, i64::MAX).unwrap();
        b.reserve("a", i64::MAX).unwrap();
        b.reserve("b", i64::MAX).unwrap();
        assert_eq!(eff(&b, i64::MAX), (0, 0));
        let mut c = Budget::new(i64::MAX, i64::MAX).unwrap();
        assert_eq!(eff(&c, 0), (i64::MAX, i64::MAX));
        c.set_safety_margin(0.5).unwrap();
        let (m, t) = eff(&c, 0);
        assert!(t <= m && m > i64::MAX / 2);
        assert!(Budget::new(5, 5).unwrap().effective(-1).is_err());
    }

    #[test]
    fn reduced_budget_is_validated() {
        let mut b = Budget::new(1000, 800).unwrap();
        b.set_output_reserve(300).unwrap();
        let r = b.reduced_by(100).unwrap();
        assert_eq!(
            (r.max_tokens(), r.target_tokens(), r.output_reserve()),
            (900, 700, 300)
        );
        assert!(b.reduced_by(801).is_err());
        assert!(
            b.reduced_by(701).is_err(),
            "max would drop below output_reserve"
        );
        assert!(b.reduced_by(-1).is_err());
    }
}
