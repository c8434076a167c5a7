//! Token counting, side by side in one process: libcupel against
//! tiktoken-rs (what most Rust hosts use) and bpe-openai (GitHub's
//! linear-time BPE), on the same texts, in the same run. Prints Markdown
//! tables of throughput (MB/s, median of rounds) and each peer's time over
//! libcupel's, the load time of the vocabularies, and the time per byte of
//! adversarial inputs against English prose.
//!
//! libcupel keeps a cache of merged pieces per thread, which the peers do
//! not: "cold" figures count each text once on a new thread (empty cache),
//! "warm" ones count it again on the same thread. The peers have no state
//! between calls, so their one figure is both.
//!
//!     cargo bench --bench tokenizers              # everything
//!     cargo bench --bench tokenizers -- quick     # fewer rounds
//!
//! quicktok (C++, PyPI `quicktok-v1`) is timed against libcupel in one
//! Python process by `benches/tokenizers_quicktok.py`.

use cupel::text::tokenizer::Tokenizer;
use cupel::text::vocab::Vocab;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// The median of `rounds` timings of `f`.
fn median(rounds: usize, mut f: impl FnMut()) -> Duration {
    let mut t: Vec<Duration> = (0..rounds)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    t.sort();
    t[t.len() / 2]
}

/// The median of `rounds` timings of `f`, each on a new thread (so that
/// libcupel's per-thread piece cache starts empty).
fn median_cold(rounds: usize, f: impl Fn() + Sync) -> Duration {
    let mut t: Vec<Duration> = (0..rounds)
        .map(|_| {
            std::thread::scope(|s| {
                s.spawn(|| {
                    let start = Instant::now();
                    f();
                    start.elapsed()
                })
                .join()
                .unwrap()
            })
        })
        .collect();
    t.sort();
    t[t.len() / 2]
}

fn mbps(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / d.as_secs_f64() / 1e6
}

/// The corpus of tests/text/corpus by kind of text, each file once.
fn corpus() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/text/corpus");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            if p.extension().is_some_and(|x| x == "md") {
                return None;
            }
            let name = p.file_name()?.to_string_lossy().into_owned();
            Some((name, std::fs::read_to_string(&p).ok()?))
        })
        .collect();
    out.sort();
    out
}

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let rounds = if quick { 5 } else { 15 };
    let files = corpus();
    let mixed: String = files
        .iter()
        .map(|(_, t)| t.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    // English prose: this repository's own documentation (Markdown prose).
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut prose = String::new();
    for f in [
        "README.md",
        "SECURITY.md",
        "docs/c-api.md",
        "docs/groups.md",
        "docs/abi.md",
        "docs/contract.md",
        "docs/testing.md",
    ] {
        prose.push_str(&std::fs::read_to_string(root.join(f)).unwrap());
        prose.push('\n');
    }
    println!(
        "corpus: {} files, {} bytes mixed, {} bytes of English prose\n",
        files.len(),
        mixed.len(),
        prose.len()
    );

    // ---- load -----------------------------------------------------------------
    println!(
        "| vocabulary | libcupel index (median) | heap | tiktoken-rs load | bpe-openai load |"
    );
    println!("|---|---|---|---|---|");
    for name in ["o200k_base", "cl100k_base"] {
        let data: &'static [u8] = match name {
            "o200k_base" => include_bytes!("../src/text/data/o200k_base.bin"),
            _ => include_bytes!("../src/text/data/cl100k_base.bin"),
        };
        let ours = median(rounds, || {
            black_box(Vocab::from_compact(data).unwrap());
        });
        let heap = Vocab::from_compact(data).unwrap().heap_bytes();
        let theirs = median(3, || {
            black_box(match name {
                "o200k_base" => tiktoken_rs::o200k_base().unwrap(),
                _ => tiktoken_rs::cl100k_base().unwrap(),
            });
        });
        // bpe-openai builds its tokenizers once, lazily: the first call is the load.
        let start = Instant::now();
        black_box(match name {
            "o200k_base" => bpe_openai::o200k_base().count("x"),
            _ => bpe_openai::cl100k_base().count("x"),
        });
        let bpe = start.elapsed();
        println!(
            "| {name} | {:.1} ms | {:.1} MB | {:.0} ms | {:.0} ms |",
            ours.as_secs_f64() * 1e3,
            heap as f64 / 1e6,
            theirs.as_secs_f64() * 1e3,
            bpe.as_secs_f64() * 1e3
        );
    }

    // ---- throughput -------------------------------------------------------------
    for name in ["o200k_base", "cl100k_base"] {
        let ours = Tokenizer::builtin(name).unwrap();
        let tik = match name {
            "o200k_base" => tiktoken_rs::o200k_base().unwrap(),
            _ => tiktoken_rs::cl100k_base().unwrap(),
        };
        let bpe = match name {
            "o200k_base" => bpe_openai::o200k_base(),
            _ => bpe_openai::cl100k_base(),
        };
        println!("\n{name}: single-threaded counting, MB/s (median of {rounds}); peer time / libcupel's cold time");
        println!("| text | bytes | libcupel cold | libcupel warm | tiktoken-rs | bpe-openai | tiktoken-rs / libcupel | bpe-openai / libcupel |");
        println!("|---|---|---|---|---|---|---|---|");
        let mut rows: Vec<(String, &str)> = vec![
            ("mixed (all files)".into(), mixed.as_str()),
            ("English prose (the docs)".into(), prose.as_str()),
        ];
        rows.extend(files.iter().map(|(n, t)| (n.clone(), t.as_str())));
        for (label, text) in rows {
            let n = ours.count(text);
            assert_eq!(n, tik.encode_ordinary(text).len(), "{label}: counts differ");
            let cold = median_cold(rounds, || {
                black_box(ours.count(black_box(text)));
            });
            let a = median(rounds, || {
                black_box(ours.count(black_box(text)));
            });
            let b = median(rounds.min(7), || {
                black_box(tik.encode_ordinary(black_box(text)).len());
            });
            let c = median(rounds.min(7), || {
                black_box(bpe.count(black_box(text)));
            });
            println!(
                "| {label} | {} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2}x | {:.2}x |",
                text.len(),
                mbps(text.len(), cold),
                mbps(text.len(), a),
                mbps(text.len(), b),
                mbps(text.len(), c),
                b.as_secs_f64() / cold.as_secs_f64(),
                c.as_secs_f64() / cold.as_secs_f64()
            );
        }

        // count_many on two cores: the corpus cut into documents of ~4 KB.
        let docs: Vec<&str> = {
            let mut v = Vec::new();
            let mut rest = mixed.as_str();
            while !rest.is_empty() {
                let mut cut = rest.len().min(4096);
                while !rest.is_char_boundary(cut) {
                    cut += 1;
                }
                v.push(&rest[..cut]);
                rest = &rest[cut..];
            }
            v
        };
        // Cold: each round on a new thread, as for texts never counted.
        let one = median_cold(rounds, || {
            for d in &docs {
                black_box(ours.count(d));
            }
        });
        let many = median_cold(rounds, || {
            black_box(ours.count_many(&docs));
        });
        println!(
            "\ncount_many over {} documents, cold: {:.1} MB/s against {:.1} MB/s one by one ({:.2}x; {} threads available)",
            docs.len(),
            mbps(mixed.len(), many),
            mbps(mixed.len(), one),
            one.as_secs_f64() / many.as_secs_f64(),
            std::thread::available_parallelism().map_or(1, |n| n.get())
        );

        // Linear time: the time per byte of adversarial inputs over prose's.
        let base = median_cold(rounds, || {
            black_box(ours.count(&prose));
        })
        .as_secs_f64()
            / prose.len() as f64;
        println!(
            "\n{name}: adversarial inputs of 1 MB, time per byte over English prose's (both cold)"
        );
        println!("| input | libcupel | tiktoken-rs |");
        println!("|---|---|---|");
        let tik_base = median(3, || {
            black_box(tik.encode_ordinary(&prose).len());
        })
        .as_secs_f64()
            / prose.len() as f64;
        let mb = 1 << 20;
        let inputs: Vec<(&str, String)> = vec![
            ("one letter", "a".repeat(mb)),
            ("spaces", " ".repeat(mb)),
            ("digits", "7".repeat(mb)),
            ("newlines", "\n".repeat(mb)),
            (
                "one huge word",
                (0..mb)
                    .map(|i| (b'a' + (i * 7 % 26) as u8) as char)
                    .collect(),
            ),
            ("one CJK character", "漢".repeat(mb / 3)),
            ("one random word", {
                let mut x = 0x2545_F491u64;
                (0..mb)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        (b'a' + (x % 26) as u8) as char
                    })
                    .collect()
            }),
            (
                "CJK prose",
                "自然言語処理は計算機科学の一分野である。".repeat(mb / 60),
            ),
        ];
        for (label, text) in &inputs {
            let ours_t = median_cold(3, || {
                black_box(ours.count(text));
            })
            .as_secs_f64()
                / text.len() as f64;
            // tiktoken-rs on a tenth: it is quadratic on some of these.
            let slice = {
                let mut e = text.len() / 10;
                while !text.is_char_boundary(e) {
                    e += 1;
                }
                &text[..e]
            };
            let start = Instant::now();
            black_box(tik.encode_ordinary(slice).len());
            let tik_t = start.elapsed().as_secs_f64() / slice.len() as f64;
            println!(
                "| {label} | {:.2}x | {:.2}x (on 100 KB) |",
                ours_t / base,
                tik_t / tik_base
            );
        }
    }
}
