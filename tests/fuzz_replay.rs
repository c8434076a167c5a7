//! The fuzz drivers (fuzz/src/driver.rs) on stable: every input of the
//! committed corpus, then seeded random inputs. The same invariants as the
//! cargo-fuzz targets, so CI checks them even without a nightly toolchain.

#[path = "../fuzz/src/driver.rs"]
mod driver;

mod common;

use common::Rng;
use std::sync::{Mutex, MutexGuard};

/// One test that makes handles at a time: `abi_program` checks that the
/// process's count of live handles is back where it started.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = common::root().join("fuzz/corpus").join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

fn random_inputs(seed: u64, count: usize, max_len: u64) -> Vec<Vec<u8>> {
    let mut rng = Rng(seed);
    (0..count)
        .map(|_| {
            let len = rng.below(max_len + 1);
            (0..len).map(|_| rng.next() as u8).collect()
        })
        .collect()
}

#[test]
fn abi_calls_corpus_and_random_programs() {
    let _one = one_at_a_time();
    let corpus = corpus("abi_calls");
    assert!(corpus.len() >= 10, "the abi_calls corpus is missing");
    for input in corpus.iter().chain(&random_inputs(1, 20_000, 800)) {
        driver::abi_program(input);
    }
    let s = &driver::STATS;
    let get = |c: &std::sync::atomic::AtomicUsize| c.load(std::sync::atomic::Ordering::Relaxed);
    let seen = [
        ("items pushed", get(&s.items_pushed), 150_000),
        ("non-empty selections", get(&s.slices_nonempty), 5000),
        ("too-small buffers", get(&s.buffer_too_small), 500),
        ("failed calls", get(&s.failures), 1000),
        ("count slicers built", get(&s.count_slicers), 300),
        ("streams finished", get(&s.stream_finishes), 100),
        ("pipelines run", get(&s.pipelines_run), 1000),
        ("variants chosen", get(&s.variants_chosen), 200),
        ("items cut", get(&s.items_cut), 50),
        ("session runs", get(&s.session_runs), 10000),
        ("first session runs", get(&s.session_firsts), 3000),
        ("session appends", get(&s.session_appends), 5000),
        ("session compactions", get(&s.session_compactions), 500),
        ("stable prefixes", get(&s.session_stable), 2000),
        ("volatile tails", get(&s.session_volatile_tails), 1000),
        (
            "runs after the pipeline was freed",
            get(&s.session_orphan_runs),
            3000,
        ),
        ("failed session runs", get(&s.session_failures), 1000),
        ("session buffers too small", get(&s.session_too_small), 1000),
        (
            "runs refused for duplicate keys",
            get(&s.session_duplicate_keys),
            20,
        ),
        (
            "pipelines read back from policies",
            get(&s.policies_round_tripped),
            500,
        ),
        ("traced runs", get(&s.traced_runs), 200),
    ];
    eprintln!("{seen:?}");
    for (what, n, least) in seen {
        assert!(
            n >= least,
            "only {n} {what}: the driver no longer reaches that path"
        );
    }
}

#[test]
fn policy_json_corpus_and_random_documents() {
    let _one = one_at_a_time();
    let corpus = corpus("policy_json");
    assert!(corpus.len() >= 10, "the policy_json corpus is missing");
    let before = driver::STATS
        .policies_read
        .load(std::sync::atomic::Ordering::Relaxed);
    let mut rng = Rng(29);
    for input in corpus.iter().chain(&random_inputs(2, 20_000, 400)) {
        driver::policy_document(input);
        // The same bytes as a built document (mode 2) and as a budget.
        let mut built = input.clone();
        if let Some(m) = built.first_mut() {
            *m = if rng.chance(50) { 2 } else { 1 };
        }
        driver::policy_document(&built);
    }
    let read = driver::STATS
        .policies_read
        .load(std::sync::atomic::Ordering::Relaxed)
        - before;
    assert!(
        read >= 300,
        "only {read} documents were read: the driver no longer reaches a pipeline"
    );
}

#[test]
fn versus_reference_corpus_and_random_cases() {
    let _one = one_at_a_time();
    let corpus = corpus("versus_reference");
    assert!(corpus.len() >= 10, "the versus_reference corpus is missing");
    let large = || {
        driver::STATS
            .large_compared
            .load(std::sync::atomic::Ordering::Relaxed)
    };
    let before = large();
    for input in corpus.iter().chain(&random_inputs(2, 10_000, 200)) {
        driver::versus_reference(input);
    }
    // Greedy and quota over inputs large enough for GreedySlice's split.
    let tiled = large() - before;
    assert!(tiled >= 50, "only {tiled} tiled cases compared");
}

/// Seeded random texts as fuzz inputs: a leading byte, then characters of
/// every class the patterns tell apart, now and then a byte that breaks
/// UTF-8.
fn random_texts(seed: u64, count: usize, max_chars: u64) -> Vec<Vec<u8>> {
    const ALPHABET: &[&str] = &[
        "a",
        "Z",
        "é",
        "ǅ",
        "中",
        "한",
        "я",
        "\u{301}",
        "0",
        "٣",
        " ",
        "  ",
        "\t",
        "\n",
        "\r\n",
        "\u{a0}",
        "'",
        "'s",
        "'LL",
        ".",
        "/",
        "😀",
        "\u{200d}",
        "<|endoftext|>",
        "don't",
    ];
    let mut rng = Rng(seed);
    (0..count)
        .map(|_| {
            let mut v = vec![rng.next() as u8];
            for _ in 0..rng.below(max_chars + 1) {
                if rng.below(200) == 0 {
                    v.push(0x80 | rng.next() as u8);
                } else {
                    v.extend_from_slice(
                        ALPHABET[rng.below(ALPHABET.len() as u64) as usize].as_bytes(),
                    );
                }
            }
            v
        })
        .collect()
}

#[test]
fn tokenize_corpus_and_random_texts() {
    let _one = one_at_a_time();
    let corpus = corpus("tokenize");
    assert!(corpus.len() >= 10, "the tokenize corpus is missing");
    for input in corpus
        .iter()
        .chain(&random_texts(3, 3_000, 60))
        .chain(&random_inputs(4, 500, 100))
    {
        driver::tokenize(input);
    }
}

#[test]
fn pretok_corpus_and_random_texts() {
    let corpus = corpus("pretok");
    assert!(corpus.len() >= 10, "the pretok corpus is missing");
    for input in corpus.iter().chain(&random_texts(5, 3_000, 80)) {
        driver::pretok(input);
    }
}
