//! MetadataTrustScorer (`scorers/metadata-trust.md`); MetadataKeyScorer is
//! one comparison, in `mod.rs`.

/// The `cupel:trust` value parsed as Rust parses an f64, clamped to [0, 1];
/// `default` when absent, unparseable or not finite.
pub fn trust(value: Option<&str>, default: f64) -> f64 {
    match value.map(str::parse::<f64>) {
        Some(Ok(v)) if v.is_finite() => v.clamp(0.0, 1.0),
        _ => default,
    }
}
