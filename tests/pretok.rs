//! The pre-tokenizers against fancy-regex (the engine tiktoken-rs runs its
//! patterns with) on the corpus in `tests/text/corpus/`: each file, the
//! files joined, and every line alone; the hand-written splitters (o200k,
//! cl100k, Llama 3) and the general engine running o200k, cl100k, Llama 3
//! and p50k/r50k. The random and adversarial comparisons are in the
//! library's own tests (`src/text/pretok/tests.rs`).
//!
//! `cargo test --release --test pretok -- --ignored --nocapture throughput`
//! prints each splitter's bytes per second on the corpus.

use cupel::text::pretok::Pattern;
use fancy_regex::Regex as Fancy;
use std::path::PathBuf;
use std::time::Instant;

const P50K: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";

fn corpus() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/text/corpus");
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap() != "README.md")
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    files.sort();
    assert!(files.len() >= 15, "corpus files: {}", files.len());
    files
}

fn oracle(re: &Fancy, text: &str) -> Vec<(usize, usize)> {
    re.find_iter(text)
        .map(|m| m.unwrap())
        .filter(|m| m.start() < m.end())
        .map(|m| (m.start(), m.end()))
        .collect()
}

fn patterns() -> Vec<(String, &'static str, Pattern)> {
    let mut v = vec![];
    for (name, src) in [
        ("o200k", Pattern::O200K),
        ("cl100k", Pattern::CL100K),
        ("llama3", Pattern::LLAMA3),
    ] {
        let hand = Pattern::compile(src).unwrap();
        assert!(hand.is_hand_written());
        v.push((format!("{name} hand-written"), src, hand));
        v.push((
            format!("{name} general"),
            src,
            Pattern::compile_general(src).unwrap(),
        ));
    }
    let p50k = Pattern::compile(P50K).unwrap();
    assert!(!p50k.is_hand_written());
    v.push(("p50k general".into(), P50K, p50k));
    v
}

fn compare(name: &str, pattern: &Pattern, fancy: &Fancy, file: &str, text: &str) {
    let expected = oracle(fancy, text);
    let got = pattern.pieces(text);
    if got != expected {
        let k = got
            .iter()
            .zip(&expected)
            .take_while(|(a, b)| a == b)
            .count();
        let show = |v: &[(usize, usize)]| v.get(k).map(|&(s, e)| text[s..e].to_string());
        panic!(
            "{name} on {file}: piece {k} differs: expected {:?}, got {:?}",
            show(&expected),
            show(&got)
        );
    }
}

#[test]
fn corpus_files_split_as_fancy_regex_splits_them() {
    let files = corpus();
    let all: String = files.iter().map(|(_, t)| t.as_str()).collect();
    let mut compared = 0;
    for (name, src, pattern) in patterns() {
        let fancy = Fancy::new(src).unwrap();
        for (file, text) in &files {
            compare(&name, &pattern, &fancy, file, text);
            compared += 1;
        }
        compare(&name, &pattern, &fancy, "all files joined", &all);
    }
    assert_eq!(compared, 7 * files.len());
}

#[test]
fn corpus_lines_split_as_fancy_regex_splits_them() {
    // Each line alone, with and without its line end: the ends of texts
    // (`\s++$`, `\s+(?!\S)` at the end) in every context the corpus has.
    let files = corpus();
    for (name, src, pattern) in patterns() {
        let fancy = Fancy::new(src).unwrap();
        for (file, text) in &files {
            for line in text.split_inclusive('\n') {
                compare(&name, &pattern, &fancy, file, line);
                compare(&name, &pattern, &fancy, file, line.trim_end());
            }
        }
    }
}

#[test]
fn pieces_tile_the_corpus() {
    let all: String = corpus().into_iter().map(|(_, t)| t).collect();
    for (name, _, pattern) in patterns().into_iter().filter(|p| p.2.is_hand_written()) {
        let mut at = 0;
        pattern.split(&all, |s, e| {
            assert!(s == at && e > s, "{name}");
            at = e;
        });
        assert_eq!(at, all.len(), "{name}");
    }
}

/// Bytes per second of each splitter (and of fancy-regex) on the corpus,
/// joined and repeated to about 4 MB; and on the adversarial runs.
#[test]
#[ignore]
fn throughput() {
    let all: String = corpus().into_iter().map(|(_, t)| t).collect();
    let mixed = all.repeat((4 << 20) / all.len() + 1);
    let prose: String = corpus()
        .into_iter()
        .filter(|(f, _)| f == "prose-latin.txt")
        .map(|(_, t)| t)
        .collect::<String>()
        .repeat(1300);
    let mb = 1 << 20;
    let inputs: Vec<(&str, String)> = vec![
        ("corpus (mixed)", mixed),
        ("latin prose", prose),
        ("1 MB of 'a'", "a".repeat(mb)),
        ("1 MB of spaces", " ".repeat(mb)),
        ("1 MB of digits", "7".repeat(mb)),
        ("1 MB of newlines", "\n".repeat(mb)),
        ("1 MB of 中", "中".repeat(mb / 3)),
        ("1 MB of \"aA'\"", "aA'".repeat(mb / 3)),
    ];
    let rate = |bytes: usize, secs: f64| bytes as f64 / secs / 1e6;
    for (what, text) in &inputs {
        println!("{what} ({} bytes):", text.len());
        for (name, src, pattern) in patterns() {
            if name.starts_with("p50k") {
                continue;
            }
            let mut best = f64::MAX;
            let mut n = 0;
            for _ in 0..3 {
                let t = Instant::now();
                n = 0;
                pattern.split(text, |_, _| n += 1);
                best = best.min(t.elapsed().as_secs_f64());
            }
            println!(
                "  {name:22} {:8.1} MB/s ({n} pieces)",
                rate(text.len(), best)
            );
            if name.ends_with("general") && what.starts_with("corpus") {
                let fancy = Fancy::new(src).unwrap();
                let t = Instant::now();
                let m = fancy.find_iter(text).filter(|m| m.is_ok()).count();
                let s = t.elapsed().as_secs_f64();
                let label = format!("{} fancy-regex", name.split(' ').next().unwrap());
                println!("  {label:22} {:8.1} MB/s ({m} pieces)", rate(text.len(), s));
            }
        }
    }
}
