//! [`Bits32`]: `i32` DP values held as `f32` bits, for x86-64 kernels
//! without a 32-bit integer max.

use super::{check, check_choice, Choice, Fused, Kernel, Lane};

/// An `i32` DP value stored as the `f32` with the same bits, for the SSE2
/// and portable kernels on x86-64: SSE2 has an `f32` max (`maxps`) but no
/// `i32` one, and compilers turn an `f32` `a > b ? a : b` into `maxps`.
/// Additions are integer additions of the bits.
///
/// Valid when the total value of a problem is at most [`BITS32_MAX_TOTAL`]:
/// every DP value is then a finite non-negative `f32` (`+0.0` for 0, never
/// `-0.0`), ordered as the integers; every value derived from the padding
/// ([`Lane::FLOOR`] plus at most the total) is a finite negative `f32`,
/// below every DP value. Negative values may order differently as `f32`
/// and as `i32`, but only ever lose against a DP value, so the selected
/// value and every keep bit of a real cell are the integer ones.
#[derive(Debug, Clone, Copy, Default, PartialEq, PartialOrd)]
#[repr(transparent)]
pub struct Bits32(pub(super) f32);

/// The largest total value [`Bits32`] lanes take: `FLOOR + total` stays
/// below `0xFF80_0000` (where the negative NaNs start) and every DP value
/// below `0x7F80_0000` (infinity).
pub const BITS32_MAX_TOTAL: i64 = 0x7F7F_FFFF;

impl Bits32 {
    /// `value` in `0..=BITS32_MAX_TOTAL`.
    pub fn new(value: i64) -> Self {
        assert!((0..=BITS32_MAX_TOTAL).contains(&value), "value {value}");
        Bits32(f32::from_bits(value as u32))
    }

    /// The integer value (negative for padding-derived values).
    pub fn get(self) -> i64 {
        self.0.to_bits() as i32 as i64
    }
}

impl Lane for Bits32 {
    /// `i32::MIN + 1`, the `f32` `-1.4e-45`: negative, and not `-0.0` (which
    /// would equal a DP value of 0).
    const FLOOR: Bits32 = Bits32(f32::from_bits(0x8000_0001));
    #[inline(always)]
    fn wrap_add(self, other: Self) -> Self {
        Bits32(f32::from_bits(
            self.0.to_bits().wrapping_add(other.0.to_bits()),
        ))
    }
    fn fused(kernel: Kernel, f: Fused<'_, Bits32>) {
        check(&f);
        match kernel {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: SSE2 is part of the x86-64 baseline and `check`
            // bounded every index the kernel touches.
            Kernel::Sse2 => unsafe { super::x86_64::sse2_bits32(f) },
            _ => super::portable::fused(f),
        }
    }
    fn choice(kernel: Kernel, c: Choice<'_, Bits32>) {
        check_choice(&c);
        match kernel {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: SSE2 is part of the x86-64 baseline and
            // `check_choice` bounded every index the kernel touches.
            Kernel::Sse2 => unsafe { super::x86_64::sse2_bits32_choice(c) },
            _ => super::portable::choice(c),
        }
    }
}
