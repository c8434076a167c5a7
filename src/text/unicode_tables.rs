// bootstrap placeholder
pub(super) const LEAF_BITS: u32 = 6;
pub(super) const LEAF_MASK: usize = 63;
pub(super) const MID_BITS: u32 = 6;
pub(super) const MID_MASK: usize = 63;
pub(super) const TOP_SHIFT: u32 = 12;
pub(super) static ASCII: [u8; 128] = [29; 128];
pub(super) static TOP: [u8; 272] = [0; 272];
pub(super) static MID: [u16; 64] = [0; 64];
pub(super) static LEAVES: [u8; 64] = [29; 64];
pub(super) static CASE_ORBITS: &[(u32, u32)] = &[];
