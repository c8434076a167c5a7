#![no_main]
//! Arbitrary bytes as UTF-8 (lossily): each hand-written pre-tokenizer
//! (o200k_base, cl100k_base, Llama 3), and the general engine on the same
//! patterns, gives exactly fancy-regex's pieces (the engine tiktoken runs).

use cupel::text::pretok::Pattern;
use fancy_regex::Regex;
use std::sync::OnceLock;

struct Case {
    hand: Pattern,
    general: Pattern,
    oracle: Regex,
}

fn cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| {
        [Pattern::O200K, Pattern::CL100K, Pattern::LLAMA3]
            .into_iter()
            .map(|src| Case {
                hand: Pattern::compile(src).unwrap(),
                general: Pattern::compile_general(src).unwrap(),
                oracle: Regex::new(src).unwrap(),
            })
            .collect()
    })
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let text: &str = &text;
    for case in cases() {
        assert!(case.hand.is_hand_written());
        let mut expected = vec![];
        for m in case.oracle.find_iter(text) {
            // fancy-regex's backtracking limit: no oracle for this input.
            let Ok(m) = m else { return };
            if m.start() < m.end() {
                expected.push((m.start(), m.end()));
            }
        }
        assert_eq!(case.hand.pieces(text), expected, "hand-written on {text:?}");
        assert_eq!(case.general.pieces(text), expected, "general on {text:?}");
    }
});
