//! The portable kernel: plain Rust, 64 cells per step, left to the
//! compiler to vectorise (SSE2 on x86-64, NEON on aarch64). The only kernel
//! on targets other than x86-64, and the readable form of what the x86-64
//! kernels do with explicit vectors.

use std::cell::Cell;

use super::{b_word, Choice, Fused, Lane, MAX_OPTIONS};

/// Runs the fused rows of `f` (bounds already checked by `super::check`).
pub(super) fn fused<T: Lane>(f: Fused<'_, T>) {
    let Fused {
        dp,
        pad,
        keep_a,
        keep_b,
        a,
        b,
        blocks,
    } = f;
    let (da, va) = a;
    let (db, vb) = b;
    let nb = keep_b.len();
    // 8 cells at a time, top down, each chunk's sources read before its
    // store (the order the SIMD kernels use), in fixed-size arrays the
    // compiler keeps in vector registers. The four windows over the DP
    // array overlap, hence cells; their fixed lengths spare the inner loop
    // any bounds check. Keep flags go to bytes, packed by [`pack_bytes`].
    let chunk =
        |w: &[Cell<T>; 64], at: usize| -> [T; 8] { std::array::from_fn(|l| w[at + l].get()) };
    for k in blocks.rev() {
        // The block and all its sources: cells 64k - da - db .. 64k + 64.
        let low = pad + 64 * k - da - db;
        let span = Cell::from_mut(&mut dp[low..low + da + db + 64]).as_slice_of_cells();
        let (cells, from_a, from_b, from_ab) = (
            window(span, da + db),
            window(span, db),
            window(span, da),
            window(span, 0),
        );
        // Per chunk of 8 cells, the keep flags of row a then of row b.
        let mut flags = [[0u8; 16]; 8];
        for j in (0..8).rev() {
            let at = 8 * j;
            let (o, oa) = (chunk(cells, at), chunk(from_a, at));
            let (ob, oab) = (chunk(from_b, at), chunk(from_ab, at));
            let mut f = [0u8; 16];
            for l in 0..8 {
                let with_a = oa[l].wrap_add(va);
                let n = o[l].lmax(with_a);
                let with_b = ob[l].lmax(oab[l].wrap_add(va)).wrap_add(vb);
                cells[at + l].set(n.lmax(with_b));
                f[l] = (with_a > o[l]) as u8;
                f[8 + l] = (with_b > n) as u8;
            }
            flags[j] = f;
        }
        keep_a[k] = pack_bytes(&flags, 0);
        keep_b[b_word(nb, k)] = pack_bytes(&flags, 8);
    }
}

/// The 64 cells of `s` from `from`.
fn window<T>(s: &[Cell<T>], from: usize) -> &[Cell<T>; 64] {
    s[from..from + 64].try_into().expect("64 cells")
}

/// Eight groups of eight flags (each 0 or 1), at `from` in each of
/// `flags`, as the bits of a word (group `g`, flag `i` at bit `8g + i`): a
/// multiplication gathers each group into one byte.
#[inline(always)]
fn pack_bytes(flags: &[[u8; 16]; 8], from: usize) -> u64 {
    let mut bits = 0;
    for (g, f) in flags.iter().enumerate() {
        let x = u64::from_le_bytes(f[from..from + 8].try_into().expect("8 flags"));
        // Byte i of x lands at bit 56 + i of the product, with no carries.
        bits |= (x.wrapping_mul(0x0102_0408_1020_4080) >> 56) << (8 * g);
    }
    bits
}

/// Runs the multiple-choice row of `c` (bounds checked by
/// `super::check_choice`): cell by cell, top down, every option's source
/// read before the cell is stored.
pub(super) fn choice<T: Lane>(c: Choice<'_, T>) {
    let Choice {
        dp,
        pad,
        keep,
        words,
        opts,
        blocks,
    } = c;
    let mut bits = [0u64; MAX_OPTIONS];
    let bits = &mut bits[..opts.len()];
    for k in blocks.rev() {
        bits.fill(0);
        for w in (64 * k..64 * k + 64).rev() {
            let mut cur = dp[pad + w];
            for (b, &(d, v)) in bits.iter_mut().zip(opts) {
                let with = dp[pad + w - d].wrap_add(v);
                *b |= ((with > cur) as u64) << (w & 63);
                cur = cur.lmax(with);
            }
            dp[pad + w] = cur;
        }
        for (j, &b) in bits.iter().enumerate() {
            keep[j * words + k] = b;
        }
    }
}
