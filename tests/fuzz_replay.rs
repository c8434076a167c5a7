//! The fuzz drivers (fuzz/src/driver.rs) on stable: every input of the
//! committed corpus, then seeded random inputs. The same invariants as the
//! cargo-fuzz targets, so CI checks them even without a nightly toolchain.

#[path = "../fuzz/src/driver.rs"]
mod driver;

mod common;

use common::Rng;

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
fn versus_reference_corpus_and_random_cases() {
    let corpus = corpus("versus_reference");
    assert!(corpus.len() >= 10, "the versus_reference corpus is missing");
    for input in corpus.iter().chain(&random_inputs(2, 10_000, 200)) {
        driver::versus_reference(input);
    }
}
