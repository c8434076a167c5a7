//! Text in (issue 26): counts equal tiktoken's `encode_ordinary` (the
//! tiktoken-rs crate, the oracle) on a corpus of real text in many scripts,
//! source code, adversarial inputs and seeded random strings; truncation
//! equals its definition, checked by brute force; vocabularies loaded
//! from tiktoken files agree with the built-in ones and with tiktoken-rs's
//! own (the general pattern engine on p50k/r50k).

mod common;

#[path = "../fuzz/src/driver.rs"]
mod driver;

use cupel::text::tokenizer::{Keep, Tokenizer};
use std::path::PathBuf;
use tiktoken_rs::CoreBPE;

/// The corpus: every file of tests/text/corpus (real text, code, ...).
fn corpus() -> Vec<(String, String)> {
    let dir = common::root().join("tests/text/corpus");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            continue; // the corpus README
        }
        if let Ok(text) = std::fs::read_to_string(&p) {
            out.push((p.file_name().unwrap().to_string_lossy().into_owned(), text));
        }
    }
    out.sort();
    assert!(out.len() >= 8, "the corpus is missing: {}", dir.display());
    out
}

/// Inputs that break naive pre-tokenizers and quadratic merges.
fn adversarial() -> Vec<String> {
    let mut v = vec![
        "a".repeat(50_000),
        " ".repeat(20_000),
        "\n".repeat(5_000),
        "\r\n".repeat(5_000),
        "1".repeat(30_000),
        "漢".repeat(10_000),
        "ab".repeat(20_000),
        "aB".repeat(10_000),
        "'s".repeat(5_000),
        "\u{301}".repeat(3_000),
        "\u{a0}".repeat(3_000),
        "\u{2028}".repeat(3_000),
        "🤖".repeat(3_000),
        "👩‍👩‍👧‍👦".repeat(500),
        " \t \n".repeat(3_000),
        "x \n ".repeat(3_000),
        "Hello   world\n\n\n  \t\nfoo".repeat(200),
        "don't I'LL we've THEY'RE it's 'S 'd".repeat(300),
    ];
    v.push(
        (0..5_000)
            .map(|i| char::from(b'!' + (i % 90) as u8))
            .collect(),
    );
    v
}

/// Seeded random strings over an alphabet with a character of every class
/// the patterns tell apart.
fn random_texts(seed: u64, count: usize, max_len: usize) -> Vec<String> {
    const ALPHABET: &[&str] = &[
        "a", "b", "Z", "Q", "é", "É", "ß", "ǅ", "ʰ", "中", "ア", "한", "α", "Ω", "я", "Я",
        "\u{301}", "\u{64b}", "0", "7", "٣", "Ⅻ", "½", " ", "  ", "\t", "\n", "\r", "\r\n",
        "\u{a0}", "\u{2028}", "\u{3000}", "'", "'s", "'T", "'re", "'LL", "'d", ".", ",", "!", "/",
        "-", "_", "\"", "(", ")", "{", "😀", "👍🏽", "\u{200d}", "\u{fe0f}", "$", "€", "#",
    ];
    let mut state = seed | 1;
    let mut next = move |k: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % k as u64) as usize
    };
    (0..count)
        .map(|_| {
            let n = next(max_len) + 1;
            (0..n).map(|_| ALPHABET[next(ALPHABET.len())]).collect()
        })
        .collect()
}

fn oracles() -> [(&'static str, Tokenizer, CoreBPE); 2] {
    [
        (
            "o200k_base",
            Tokenizer::builtin("o200k_base").unwrap(),
            tiktoken_rs::o200k_base().unwrap(),
        ),
        (
            "cl100k_base",
            Tokenizer::builtin("cl100k_base").unwrap(),
            tiktoken_rs::cl100k_base().unwrap(),
        ),
    ]
}

#[track_caller]
fn same_count(name: &str, ours: &Tokenizer, theirs: &CoreBPE, text: &str) {
    let want = theirs.encode_ordinary(text).len();
    let got = ours.count(text);
    if got != want {
        let shown: String = text.chars().take(200).collect();
        panic!(
            "{name}: {got} tokens, tiktoken says {want}, for {shown:?} ({} bytes)",
            text.len()
        );
    }
}

#[test]
fn counts_equal_tiktoken_on_the_corpus_whole_and_by_line() {
    for (name, ours, theirs) in oracles() {
        for (file, text) in corpus() {
            let _ = file;
            same_count(name, &ours, &theirs, &text);
            for line in text.split_inclusive('\n') {
                same_count(name, &ours, &theirs, line);
            }
        }
    }
}

#[test]
fn counts_equal_tiktoken_on_slices_of_the_corpus() {
    let texts = corpus();
    for (name, ours, theirs) in oracles() {
        let mut state = 0x9E37_79B9u64;
        for _ in 0..3_000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let (_, text) = &texts[(state >> 33) as usize % texts.len()];
            let len = text.len();
            let mut a = (state >> 13) as usize % len;
            let mut b = (a + 1 + (state >> 40) as usize % 400).min(len);
            while !text.is_char_boundary(a) {
                a -= 1;
            }
            while !text.is_char_boundary(b) {
                b += 1;
            }
            same_count(name, &ours, &theirs, &text[a..b]);
        }
    }
}

#[test]
fn counts_equal_tiktoken_on_adversarial_and_random_text() {
    for (name, ours, theirs) in oracles() {
        for text in adversarial() {
            same_count(name, &ours, &theirs, &text);
        }
        for text in random_texts(7, 4_000, 40) {
            same_count(name, &ours, &theirs, &text);
        }
        for text in random_texts(11, 100, 2_000) {
            same_count(name, &ours, &theirs, &text);
        }
        same_count(name, &ours, &theirs, "");
        // Special tokens are ordinary text.
        same_count(name, &ours, &theirs, "<|endoftext|> and <|fim_prefix|>");
    }
}

#[test]
fn count_many_equals_count_on_each_text() {
    let mut texts: Vec<String> = corpus().into_iter().map(|(_, t)| t).collect();
    texts.extend(adversarial());
    texts.extend(random_texts(3, 300, 300));
    let refs: Vec<&str> = texts.iter().map(|t| t.as_str()).collect();
    for (_, ours, _) in oracles() {
        let many = ours.count_many(&refs);
        let one: Vec<usize> = refs.iter().map(|t| ours.count(t)).collect();
        assert_eq!(many, one);
        assert_eq!(ours.count_many(&refs[..1]), one[..1]);
        assert!(ours.count_many(&[]).is_empty());
    }
}

/// `cupel_tokenizer_truncate`'s rules by brute force (the fuzz driver's).
fn brute_force(theirs: &CoreBPE, text: &str, max: usize, keep: Keep) -> (usize, usize, usize) {
    let keep = match keep {
        Keep::Head => cupel::ffi::CUPEL_KEEP_HEAD,
        Keep::Tail => cupel::ffi::CUPEL_KEEP_TAIL,
        Keep::BothEnds => cupel::ffi::CUPEL_KEEP_BOTH_ENDS,
    };
    driver::brute_force_cut(theirs, text, max, keep)
}

fn check_truncation(name: &str, ours: &Tokenizer, theirs: &CoreBPE, text: &str, maxes: &[usize]) {
    for &max in maxes {
        for keep in [Keep::Head, Keep::Tail, Keep::BothEnds] {
            let cut = ours.truncate(text, max, keep);
            let want = brute_force(theirs, text, max, keep);
            assert_eq!(
                (cut.head_end, cut.tail_start, cut.tokens),
                want,
                "{name} {keep:?} max {max} of {text:?}"
            );
            assert!(
                cut.tokens <= max,
                "{name} {keep:?} max {max}: {} tokens",
                cut.tokens
            );
            // The count is the head's plus the tail's, each counted alone.
            let tail = if cut.tail_start < text.len() {
                ours.count(&text[cut.tail_start..])
            } else {
                0
            };
            assert_eq!(cut.tokens, ours.count(&text[..cut.head_end]) + tail);
        }
    }
}

#[test]
fn truncation_follows_its_rules_on_random_text() {
    for (name, ours, theirs) in oracles() {
        for text in random_texts(5, 250, 24) {
            let n = ours.count(&text);
            let maxes: Vec<usize> = (0..=n + 1).collect();
            check_truncation(name, &ours, &theirs, &text, &maxes);
        }
    }
}

/// Seeded strings of mostly white space (the pieces whose extent depends
/// most on what follows them).
fn spacey_texts(seed: u64, count: usize, max_len: usize) -> Vec<String> {
    const ALPHABET: &[&str] = &[
        " ", " ", "  ", "\n", "\n\n", "\t", "\r\n", "\r", "a", "Bc", "'s", "1", ".", "\u{a0}", "漢",
    ];
    let mut state = seed | 1;
    let mut next = move |k: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % k as u64) as usize
    };
    (0..count)
        .map(|_| {
            let n = next(max_len) + 1;
            (0..n).map(|_| ALPHABET[next(ALPHABET.len())]).collect()
        })
        .collect()
}

#[test]
fn truncation_follows_its_rules_on_white_space_and_longer_text() {
    for (name, ours, theirs) in oracles() {
        for text in spacey_texts(17, 300, 30) {
            let n = ours.count(&text);
            check_truncation(
                name,
                &ours,
                &theirs,
                &text,
                &(0..=n + 1).collect::<Vec<_>>(),
            );
        }
        for text in random_texts(19, 30, 160)
            .into_iter()
            .chain(spacey_texts(23, 30, 120))
        {
            let n = ours.count(&text);
            let maxes: Vec<usize> = (0..=n).step_by(3).chain([n.saturating_sub(1)]).collect();
            check_truncation(name, &ours, &theirs, &text, &maxes);
        }
    }
}

#[test]
fn truncation_follows_its_rules_on_the_corpus() {
    let texts = corpus();
    for (name, ours, theirs) in oracles() {
        for (_, text) in &texts {
            // The first few hundred bytes of each file, at a char boundary.
            let mut end = text.len().min(400);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            let text = &text[..end];
            let n = ours.count(text);
            let maxes: Vec<usize> = [0, 1, 2, 3, n / 3, n / 2, n - 1, n, n + 5]
                .into_iter()
                .filter(|&m| m <= n + 5)
                .collect();
            check_truncation(name, &ours, &theirs, text, &maxes);
        }
        for text in [
            "   \n\n   \n  x",
            "a \n\n   b",
            "it's\n\n\n",
            "x  ",
            "  y",
            "漢字漢字漢字",
        ] {
            let n = ours.count(text);
            check_truncation(name, &ours, &theirs, text, &(0..=n).collect::<Vec<_>>());
        }
    }
}

/// The manifest directory of the tiktoken-rs crate (where its vocabulary
/// files are), from `cargo metadata`.
fn tiktoken_assets() -> PathBuf {
    let out = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(common::root().join("Cargo.toml"))
        .output()
        .unwrap();
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let pkg = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "tiktoken-rs")
        .expect("tiktoken-rs in the dependency graph");
    PathBuf::from(pkg["manifest_path"].as_str().unwrap())
        .parent()
        .unwrap()
        .join("assets")
}

#[test]
fn the_builtin_vocabularies_are_tiktokens_files() {
    let assets = tiktoken_assets();
    for name in ["o200k_base", "cl100k_base"] {
        let file = std::fs::read(assets.join(format!("{name}.tiktoken"))).unwrap();
        let loaded = cupel::text::vocab::Vocab::from_tiktoken(&file).unwrap();
        let builtin = cupel::text::vocab::builtin(name).unwrap();
        assert_eq!(loaded.len(), builtin.len(), "{name}");
        for t in 0..builtin.len() {
            assert_eq!(
                loaded.rank(builtin.token(t)),
                Some(t as u32),
                "{name} token {t}"
            );
        }
    }
}

#[test]
fn loaded_vocabularies_count_as_tiktoken_does() {
    let assets = tiktoken_assets();
    let texts: Vec<String> = corpus()
        .into_iter()
        .map(|(_, t)| t)
        .chain(random_texts(13, 300, 60))
        .collect();
    let o200k = std::fs::read(assets.join("o200k_base.tiktoken")).unwrap();
    let cl100k = std::fs::read(assets.join("cl100k_base.tiktoken")).unwrap();
    let p50k = std::fs::read(assets.join("p50k_base.tiktoken")).unwrap();
    let r50k = std::fs::read(assets.join("r50k_base.tiktoken")).unwrap();
    // r50k/p50k's pattern as tiktoken-rs writes it (possessive quantifiers, `$`).
    const GPT2: &str =
        r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";
    let cases: [(&str, Tokenizer, CoreBPE); 4] = [
        (
            "o200k file, default pattern",
            Tokenizer::from_tiktoken(&o200k, None).unwrap(),
            tiktoken_rs::o200k_base().unwrap(),
        ),
        (
            "cl100k file, cl100k pattern",
            Tokenizer::from_tiktoken(&cl100k, Some(cupel::text::pretok::Pattern::CL100K)).unwrap(),
            tiktoken_rs::cl100k_base().unwrap(),
        ),
        (
            "p50k file, its pattern (general engine)",
            Tokenizer::from_tiktoken(&p50k, Some(GPT2)).unwrap(),
            tiktoken_rs::p50k_base().unwrap(),
        ),
        (
            "r50k file, its pattern (general engine)",
            Tokenizer::from_tiktoken(&r50k, Some(GPT2)).unwrap(),
            tiktoken_rs::r50k_base().unwrap(),
        ),
    ];
    for (name, ours, theirs) in &cases {
        for text in &texts {
            same_count(name, ours, theirs, text);
        }
    }
}

/// Long pieces (past the 1 KB where counting goes by chunks and stitches
/// them): random words of many kilobytes in several alphabets, against
/// tiktoken.
#[test]
fn long_pieces_count_as_tiktoken_does() {
    let alphabets: [&[&str]; 7] = [
        &["a"],
        &["a", "b"],
        &["e", "t", "a", "o", "i", "n", "s", "h", "r", "d", "l", "u"],
        &["E", "t", "A", "o"],
        &["漢", "字", "の", "本", "語"],
        &["я", "з", "ы", "к"],
        &["\u{935}", "\u{93e}", "\u{928}", "\u{94d}"],
    ];
    let mut state = 0xC0FF_EE11u64;
    let mut next = |k: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % k as u64) as usize
    };
    for (name, ours, theirs) in oracles() {
        for alphabet in alphabets {
            for _ in 0..3 {
                let len = 1_100 + next(5_000);
                let mut word = String::new();
                while word.len() < len {
                    word.push_str(alphabet[next(alphabet.len())]);
                }
                same_count(name, &ours, &theirs, &word);
                // With white space around it, and as white space alone.
                same_count(name, &ours, &theirs, &format!("  {word}\n"));
            }
        }
        same_count(name, &ours, &theirs, &" ".repeat(3_000 + next(3_000)));
        same_count(name, &ours, &theirs, &"\n".repeat(3_000 + next(3_000)));
        same_count(name, &ours, &theirs, &"\t ".repeat(2_000));
    }
}
