//! libcupel against the published `cupel` 1.2.0 crate, same seeded inputs,
//! same run. Prints a Markdown table: median time per call of each side,
//! the speed ratio (crate time / libcupel time), and the peak heap each call
//! allocated (measured by a counting global allocator).
//!
//!     cargo bench --bench compare                 # everything
//!     cargo bench --bench compare -- knapsack     # cases whose name contains "knapsack"
//!     CUPEL_KNAPSACK_KERNEL=portable cargo bench --bench compare -- knapsack
//!
//! Our side is timed through the whole slice call (Sort stage included);
//! the crate's side through its slicer only (its caller sorts), which can
//! only favour the crate.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::CString;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

use cupel::ffi::*;
use cupel::slicer::kernel::Kernel;
use cupel::{
    Budget, CountEntry, CountQuota, Engine, Items, Knapsack, NewItem, Quota, QuotaEntry, Scarcity,
    Slicer,
};
use cupel_ref as r;

// ---- peak heap measurement ------------------------------------------------

struct Counting;
static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            let now = CURRENT.fetch_add(l.size(), Relaxed) + l.size();
            PEAK.fetch_max(now, Relaxed);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(l);
        if !p.is_null() {
            let now = CURRENT.fetch_add(l.size(), Relaxed) + l.size();
            PEAK.fetch_max(now, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l);
        CURRENT.fetch_sub(l.size(), Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = System.realloc(p, l, new);
        if !q.is_null() {
            if new >= l.size() {
                let now = CURRENT.fetch_add(new - l.size(), Relaxed) + new - l.size();
                PEAK.fetch_max(now, Relaxed);
            } else {
                CURRENT.fetch_sub(l.size() - new, Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Median wall time of `f` over several runs, and the largest heap growth
/// any run caused. Runs at least 3 times and until ~0.5 s or 25 runs.
fn measure<T>(mut f: impl FnMut() -> T) -> (Duration, usize) {
    let mut times = Vec::new();
    let mut peak = 0;
    let start = Instant::now();
    while times.len() < 3 || (times.len() < 25 && start.elapsed() < Duration::from_millis(500)) {
        let base = CURRENT.load(Relaxed);
        PEAK.store(base, Relaxed);
        let t = Instant::now();
        let out = f();
        times.push(t.elapsed());
        peak = peak.max(PEAK.load(Relaxed) - base);
        drop(black_box(out));
    }
    times.sort();
    (times[times.len() / 2], peak)
}

/// Median wall times of `a` and `b`, run alternately so that a slow spell
/// of the machine hits both sides alike. At least 3 rounds, then until ~1 s
/// or 25 rounds.
fn measure_pair<A, B>(mut a: impl FnMut() -> A, mut b: impl FnMut() -> B) -> (Duration, Duration) {
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    let start = Instant::now();
    while ta.len() < 3 || (ta.len() < 25 && start.elapsed() < Duration::from_secs(1)) {
        let t = Instant::now();
        drop(black_box(a()));
        ta.push(t.elapsed());
        let t = Instant::now();
        drop(black_box(b()));
        tb.push(t.elapsed());
    }
    ta.sort();
    tb.sort();
    (ta[ta.len() / 2], tb[tb.len() / 2])
}

/// Median wall times of each of `fs`, run in turn round after round (as
/// [`measure_pair`]).
fn measure_each(fs: &mut [&mut dyn FnMut()]) -> Vec<Duration> {
    let mut t: Vec<Vec<Duration>> = vec![Vec::new(); fs.len()];
    let start = Instant::now();
    while t[0].len() < 3 || (t[0].len() < 25 && start.elapsed() < Duration::from_secs(1)) {
        for (k, f) in fs.iter_mut().enumerate() {
            let at = Instant::now();
            f();
            t[k].push(at.elapsed());
        }
    }
    t.iter_mut()
        .map(|v| {
            v.sort();
            v[v.len() / 2]
        })
        .collect()
}

/// The heap growth of one call of `f` on a fresh thread, so that no
/// per-thread scratch kept by an earlier call hides an allocation.
fn cold_peak<T: Send>(f: impl FnOnce() -> T + Send) -> usize {
    std::thread::scope(|s| {
        s.spawn(|| {
            let base = CURRENT.load(Relaxed);
            PEAK.store(base, Relaxed);
            let out = f();
            let peak = PEAK.load(Relaxed) - base;
            drop(black_box(out));
            peak
        })
        .join()
        .unwrap()
    })
}

// ---- inputs ------------------------------------------------------------------

use cupel::testing::Rng;

const KINDS: [&str; 4] = ["Message", "Document", "ToolOutput", "Memory"];

struct Input {
    tokens: Vec<i64>,
    scores: Vec<f64>,
    kinds: Vec<&'static str>,
}

fn input(seed: u64, n: usize, max_tokens: u64) -> Input {
    let mut rng = Rng(seed);
    let mut x = Input {
        tokens: vec![],
        scores: vec![],
        kinds: vec![],
    };
    for _ in 0..n {
        x.tokens.push(1 + rng.below(max_tokens) as i64);
        x.scores.push(rng.below(1_000_000) as f64 / 1e6);
        x.kinds.push(KINDS[rng.below(4) as usize]);
    }
    x
}

fn ours_items(x: &Input) -> Items {
    let batch: Vec<NewItem> = (0..x.tokens.len())
        .map(|i| NewItem {
            tokens: x.tokens[i],
            score: x.scores[i],
            kind: Some(x.kinds[i]),
        })
        .collect();
    let mut items = Items::new();
    items.push_many(&batch).unwrap();
    items
}

/// The crate's input: scored items in Sort-stage order (score descending, stable).
fn ref_items(x: &Input) -> Vec<r::ScoredItem> {
    let mut v: Vec<r::ScoredItem> = (0..x.tokens.len())
        .map(|i| r::ScoredItem {
            item: r::ContextItemBuilder::new(i.to_string(), x.tokens[i])
                .kind(r::ContextKind::new(x.kinds[i]).unwrap())
                .build()
                .unwrap(),
            score: x.scores[i],
        })
        .collect();
    v.sort_by(|a, b| b.score.partial_cmp(&a.score).unwrap());
    v
}

// ---- reporting -----------------------------------------------------------------

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn mib(b: usize) -> f64 {
    b as f64 / (1 << 20) as f64
}

struct Row {
    name: String,
    ours: (Duration, usize),
    theirs: Option<(Duration, usize)>,
    cells: Option<f64>,
}

fn print_row(row: &Row) {
    let (t, m) = row.ours;
    let rate = row.cells.map_or(String::new(), |c| {
        format!("{:.2}", c / t.as_secs_f64() / 1e9)
    });
    match row.theirs {
        // A groups pipeline row's other side is ours without groups.
        Some((rt, rm)) if row.name.starts_with("groups: pipeline") => println!(
            "| {} | {:.3} | {:.3} (libcupel, no groups) | **grouped/ungrouped {:.2}x** | {:.2} | {:.2} (no groups) | - | |",
            row.name,
            ms(t),
            ms(rt),
            t.as_secs_f64() / rt.as_secs_f64(),
            mib(m),
            mib(rm)
        ),
        // The ABI row's other side is the Rust core: report the overhead.
        Some((rt, _)) if row.name.starts_with("C ABI") => println!(
            "| {} | {:.3} | {:.3} (Rust core) | **ABI/core {:.2}x** | - | - | - | |",
            row.name,
            ms(t),
            ms(rt),
            t.as_secs_f64() / rt.as_secs_f64()
        ),
        Some((rt, rm)) => println!(
            "| {} | {:.3} | {:.3} | **{:.1}x** | {:.2} | {:.2} | {} | {} |",
            row.name,
            ms(t),
            ms(rt),
            rt.as_secs_f64() / t.as_secs_f64(),
            mib(m),
            mib(rm),
            if m > 0 {
                format!("1/{:.1}", rm as f64 / m as f64)
            } else {
                "-".into()
            },
            rate
        ),
        None => println!(
            "| {} | {:.3} | (refused or not run) | - | {:.2} | - | - | {} |",
            row.name,
            ms(t),
            mib(m),
            rate
        ),
    }
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

// ---- cases ---------------------------------------------------------------------

fn slice_case(
    name: &str,
    x: &Input,
    target: i64,
    ours: Slicer,
    theirs: Option<&dyn r::Slicer>,
) -> Row {
    let items = ours_items(x);
    let budget = Budget::new(target, target).unwrap();
    let engine = Engine::new(ours);
    let got = engine.slice(&items, &budget, 0).unwrap().selected.len();
    let ours_peak = cold_peak(|| engine.slice(&items, &budget, 0).unwrap());
    let ours_call = || engine.slice(&items, &budget, 0).unwrap();
    let (ours_t, theirs) = match theirs {
        None => {
            let (t, _) = measure(ours_call);
            ((t, ours_peak), None)
        }
        Some(s) => {
            let scored = ref_items(x);
            let rb = r::ContextBudget::new(target, target, 0, Default::default(), 0.0).unwrap();
            let want = s.slice(&scored, &rb).unwrap().len();
            assert_eq!(got, want, "{name}: the two sides selected different counts");
            let (_, ref_peak) = measure(|| s.slice(&scored, &rb).unwrap());
            let (t, rt) = measure_pair(ours_call, || s.slice(&scored, &rb).unwrap());
            ((t, ours_peak), Some((rt, ref_peak)))
        }
    };
    Row {
        name: name.to_string(),
        ours: ours_t,
        theirs,
        cells: None,
    }
}

/// Keep-together groups: the same input sliced with no group and with
/// every item in a two-member group (items 2k and 2k+1), against the crate
/// (which has no groups) on the ungrouped input, all three in one run.
/// Two rows: ungrouped and grouped, each as a ratio to the crate.
fn groups_case(
    name: &str,
    x: &Input,
    target: i64,
    ours: Slicer,
    theirs: &dyn r::Slicer,
) -> [Row; 2] {
    let plain = ours_items(x);
    let mut paired = plain.clone();
    for i in 0..x.tokens.len() {
        paired.set_group(i, (i / 2 + 1) as u64).unwrap();
    }
    let budget = Budget::new(target, target).unwrap();
    let engine = Engine::new(ours);
    let scored = ref_items(x);
    let rb = r::ContextBudget::new(target, target, 0, Default::default(), 0.0).unwrap();
    let peak_plain = cold_peak(|| engine.slice(&plain, &budget, 0).unwrap());
    let peak_paired = cold_peak(|| engine.slice(&paired, &budget, 0).unwrap());
    let (_, ref_peak) = measure(|| theirs.slice(&scored, &rb).unwrap());
    let t = measure_each(&mut [
        &mut || drop(black_box(engine.slice(&plain, &budget, 0).unwrap())),
        &mut || drop(black_box(engine.slice(&paired, &budget, 0).unwrap())),
        &mut || drop(black_box(theirs.slice(&scored, &rb).unwrap())),
    ]);
    [
        Row {
            name: format!("{name}, no groups"),
            ours: (t[0], peak_plain),
            theirs: Some((t[2], ref_peak)),
            cells: None,
        },
        Row {
            name: format!("{name}, every item in a pair"),
            ours: (t[1], peak_paired),
            theirs: Some((t[2], ref_peak)),
            cells: None,
        },
    ]
}

/// The whole pipeline on both sides: Composite(Recency, Kind) scoring,
/// deduplication (one item in eight repeats an earlier content), Greedy +
/// Chronological or Knapsack(100) + U-shaped, a pinned system prompt. The
/// placed contents must be the same; each side's items are built once,
/// outside the timing (the crate's run clones its items; ours reads them).
fn pipeline_case(name: &str, n: usize, knapsack: bool) -> Row {
    pipeline_run(name, n, knapsack, false)
}

/// The pipeline of [`pipeline_case`] (ours only), its items with no group
/// and with every item in a two-member group, in one run: the row's two
/// sides are ours grouped and ours ungrouped.
fn pipeline_groups_case(name: &str, n: usize, knapsack: bool) -> Row {
    pipeline_run(name, n, knapsack, true)
}

fn pipeline_run(name: &str, n: usize, knapsack: bool, paired: bool) -> Row {
    let mut rng = Rng(n as u64 ^ 0x5EED);
    let contents: Vec<String> = (0..n)
        .map(|i| {
            if i > 0 && rng.chance(12) {
                format!("chunk {}", rng.below(i as u64))
            } else {
                format!("chunk {i}")
            }
        })
        .collect();
    let tokens: Vec<i64> = (0..n).map(|_| 1 + rng.below(2000) as i64).collect();
    let kinds: Vec<&str> = (0..n).map(|_| KINDS[rng.below(4) as usize]).collect();
    let stamps: Vec<i64> = (0..n)
        .map(|_| 1_700_000_000_000 + rng.below(30 * 86_400_000) as i64)
        .collect();
    let (max, target) = (200_000, 128_000);

    // Ours: the Rust core (the C ABI adds a pointer check per argument).
    let mut items = Items::new();
    let batch: Vec<NewItem> = (0..n)
        .map(|i| NewItem {
            tokens: tokens[i],
            score: 0.0,
            kind: Some(if i == 0 { "SystemPrompt" } else { kinds[i] }),
        })
        .collect();
    items.push_many(&batch).unwrap();
    for i in 0..n {
        items.set_content(i, &contents[i]).unwrap();
        items.set_timestamp(i, stamps[i]).unwrap();
    }
    items.set_pinned(0, true).unwrap();
    let scorer = cupel::scorer::Scorer::composite(vec![
        (cupel::scorer::Scorer::Recency, 1.0),
        (cupel::scorer::Scorer::kind(None).unwrap(), 1.0),
    ])
    .unwrap();
    let slicer = if knapsack {
        Slicer::Knapsack(Knapsack::new(100).unwrap())
    } else {
        Slicer::Greedy
    };
    let placer = if knapsack {
        cupel::placer::Placer::UShaped
    } else {
        cupel::placer::Placer::Chronological
    };
    let mut pipeline =
        cupel::pipeline::Pipeline::new(Some(scorer), Engine::new(slicer), Some(placer));
    pipeline.overflow = cupel::pipeline::Overflow::Proceed;
    let budget = Budget::new(max, target).unwrap();
    let ours_run = || pipeline.run(&items, &budget, None).unwrap();
    if paired {
        let mut pairs = items.clone();
        for i in 0..n {
            pairs.set_group(i, (i / 2 + 1) as u64).unwrap();
        }
        let pairs_run = || pipeline.run(&pairs, &budget, None).unwrap();
        let peak = cold_peak(pairs_run);
        let (t, plain) = measure_pair(pairs_run, ours_run);
        return Row {
            name: name.to_string(),
            ours: (t, peak),
            theirs: Some((plain, cold_peak(ours_run))),
            cells: None,
        };
    }

    // Theirs.
    use chrono::TimeZone;
    let theirs_items: Vec<r::ContextItem> = (0..n)
        .map(|i| {
            r::ContextItemBuilder::new(contents[i].clone(), tokens[i])
                .kind(r::ContextKind::new(if i == 0 { "SystemPrompt" } else { kinds[i] }).unwrap())
                .timestamp(chrono::Utc.timestamp_millis_opt(stamps[i]).unwrap())
                .pinned(i == 0)
                .build()
                .unwrap()
        })
        .collect();
    let composite = r::scorer::CompositeScorer::new(vec![
        (
            Box::new(r::scorer::RecencyScorer) as Box<dyn r::scorer::Scorer>,
            1.0,
        ),
        (Box::new(r::scorer::KindScorer::with_default_weights()), 1.0),
    ])
    .unwrap();
    let builder = r::pipeline::Pipeline::builder()
        .scorer(Box::new(composite))
        .deduplication(true)
        .overflow_strategy(r::model::OverflowStrategy::Proceed);
    let builder = if knapsack {
        builder
            .slicer(Box::new(r::KnapsackSlice::new(100).unwrap()))
            .placer(Box::new(r::placer::UShapedPlacer))
    } else {
        builder
            .slicer(Box::new(r::GreedySlice))
            .placer(Box::new(r::placer::ChronologicalPlacer))
    };
    let theirs_pipeline = builder.build().unwrap();
    let rb = r::ContextBudget::new(max, target, 0, Default::default(), 0.0).unwrap();
    let theirs_run = || theirs_pipeline.run(&theirs_items, &rb);

    let ours_out: Vec<&str> = ours_run()
        .iter()
        .map(|&i| contents[i as usize].as_str())
        .collect();
    let ours_peak = cold_peak(ours_run);
    // The crate's first run: its output, peak heap and (at N >= 100,000,
    // where one run takes tens of seconds) its only timing.
    let base = CURRENT.load(Relaxed);
    PEAK.store(base, Relaxed);
    let start = Instant::now();
    let first = theirs_run();
    let first_time = start.elapsed();
    let ref_peak = PEAK.load(Relaxed) - base;
    let theirs = match first {
        Err(e) => {
            println!("<!-- {name}: the crate refused: {e} -->");
            None
        }
        Ok(out) => {
            let theirs_out: Vec<&str> = out.iter().map(|i| i.content()).collect();
            assert_eq!(
                ours_out, theirs_out,
                "{name}: the two pipelines placed different items"
            );
            Some(first_time)
        }
    };
    let (t, rt) = match theirs {
        Some(first) if n >= 100_000 => (measure(ours_run).0, Some(first)),
        Some(_) => {
            let (t, rt) = measure_pair(ours_run, || theirs_run().unwrap());
            (t, Some(rt))
        }
        None => (measure(ours_run).0, None),
    };
    Row {
        name: name.to_string(),
        ours: (t, ours_peak),
        theirs: rt.map(|rt| (rt, ref_peak)),
        cells: None,
    }
}

fn knapsack_case(name: &str, n: usize, target: i64, bucket: i64, with_ref: bool) -> Row {
    let x = input(n as u64 ^ bucket as u64, n, 2000);
    let reference = r::KnapsackSlice::new(bucket).unwrap();
    let mut row = slice_case(
        name,
        &x,
        target,
        Slicer::Knapsack(Knapsack::new(bucket).unwrap()),
        with_ref.then_some(&reference as &dyn r::Slicer),
    );
    row.cells = Some(n as f64 * (target / bucket + 1) as f64);
    row
}

/// The DP kernel alone, outside any slice call: `rows` rows of random
/// weights (1..=2000 cells) and values over `capacity + 1` cells, two rows
/// per pass, every block of every row computed (none of the knapsack's row
/// filtering or region skipping), in the lanes a slice call would use.
fn kernel_case(name: &str, rows: usize, capacity: usize) -> Row {
    use cupel::slicer::kernel::{self, Bits32, Lane};
    fn run<T: Lane>(k: Kernel, r: &[(usize, i64)], words: usize, lane: fn(i64) -> T) -> Duration {
        let max_weight = 2000;
        let mut keep = vec![0u64; r.len() * words];
        let mut dp = vec![T::default(); kernel::dp_len(words, max_weight)];
        let (t, _) = measure(|| {
            kernel::init_dp(&mut dp, max_weight);
            for (two, p) in keep.chunks_mut(2 * words).zip(r.chunks_exact(2)) {
                let (a, b) = two.split_at_mut(words);
                let (ra, rb) = ((p[0].0, lane(p[0].1)), (p[1].0, lane(p[1].1)));
                kernel::rows(k, &mut dp, max_weight, a, ra, Some((b, rb)), 0);
            }
            keep[0]
        });
        t
    }
    let mut rng = Rng(rows as u64);
    let r: Vec<(usize, i64)> = (0..rows)
        .map(|_| (1 + rng.below(2000) as usize, 1 + rng.below(10_000) as i64))
        .collect();
    let words = (capacity + 1).div_ceil(64);
    let k = Kernel::selected();
    let total: i64 = r.iter().map(|x| x.1).sum();
    let t = if kernel::use_bits32(k, total) {
        run(k, &r, words, Bits32::new)
    } else {
        run(k, &r, words, |v| v as i32)
    };
    let bytes = rows * words * 8;
    Row {
        name: name.to_string(),
        ours: (t, bytes),
        theirs: None,
        cells: Some(rows as f64 * (capacity + 1) as f64),
    }
}

fn quota_entries() -> Vec<(&'static str, f64, f64)> {
    vec![
        ("Document", 20.0, 60.0),
        ("ToolOutput", 10.0, 40.0),
        ("Memory", 5.0, 30.0),
    ]
}

fn count_entries() -> Vec<(&'static str, u32, u32)> {
    vec![
        ("Document", 5, 40),
        ("ToolOutput", 3, 10),
        ("Memory", 1, 20),
    ]
}

fn ours_count_entries() -> Vec<CountEntry> {
    count_entries()
        .into_iter()
        .map(|(k, require, cap)| CountEntry {
            kind: k.into(),
            require,
            cap,
        })
        .collect()
}

fn ref_count_entries() -> Vec<r::CountQuotaEntry> {
    count_entries()
        .into_iter()
        .map(|(k, req, cap)| {
            r::CountQuotaEntry::new(r::ContextKind::new(k).unwrap(), req as usize, cap as usize)
                .unwrap()
        })
        .collect()
}

/// C ABI (push_many + slice into a caller buffer, through the extern "C"
/// functions) against the Rust core (push_many + slice), at `n` items.
fn abi_case(n: usize) -> Row {
    let x = input(99, n, 2000);
    let target = 128_000;
    let core_call = || {
        let items = ours_items(&x);
        let budget = Budget::new(target, target).unwrap();
        Engine::new(Slicer::Greedy)
            .slice(&items, &budget, 0)
            .unwrap()
            .selected
    };
    let kinds: Vec<CString> = x.kinds.iter().map(|k| CString::new(*k).unwrap()).collect();
    let kind_ptrs: Vec<*const std::ffi::c_char> = kinds.iter().map(|k| k.as_ptr()).collect();
    let mut buf = vec![0usize; n];
    let abi_call = || unsafe {
        let mut items = std::ptr::null_mut();
        let mut budget = std::ptr::null_mut();
        let mut slicer = std::ptr::null_mut();
        assert_eq!(cupel_items_new(&mut items), CUPEL_OK);
        assert_eq!(
            cupel_items_push_many(
                items,
                n,
                x.tokens.as_ptr(),
                x.scores.as_ptr(),
                kind_ptrs.as_ptr()
            ),
            CUPEL_OK
        );
        assert_eq!(cupel_budget_new(target, target, &mut budget), CUPEL_OK);
        assert_eq!(cupel_slicer_new_greedy(&mut slicer), CUPEL_OK);
        let mut len = 0;
        let st = cupel_slice(
            slicer,
            items,
            budget,
            0,
            buf.as_mut_ptr(),
            buf.len(),
            &mut len,
            std::ptr::null_mut(),
        );
        assert_eq!(st, CUPEL_OK);
        cupel_slicer_free(slicer);
        cupel_budget_free(budget);
        cupel_items_free(items);
        len
    };
    let (abi_t, core_t) = measure_pair(abi_call, core_call);
    let abi = (abi_t, 0);
    let core = (core_t, 0);
    // Here "theirs" is the Rust core: `print_row` shows ABI time / core time.
    Row {
        name: format!("C ABI vs Rust core, greedy, N = {n}"),
        ours: abi,
        theirs: Some(core),
        cells: None,
    }
}

fn main() {
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let wanted = |name: &str| filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str()));

    println!("CPU: {}", cpu_model());
    println!(
        "knapsack kernel: {} (available: {})",
        Kernel::selected().name(),
        Kernel::available()
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!();
    println!("| case | libcupel ms | cupel 1.2.0 ms | speed ratio | libcupel peak MiB | cupel 1.2.0 peak MiB | memory | libcupel Gcells/s |");
    println!("|---|---|---|---|---|---|---|---|");

    let mut cases: Vec<(String, Box<dyn Fn() -> Row>)> = Vec::new();
    type GroupCase = Box<dyn Fn() -> [Row; 2]>;
    let mut group_cases: Vec<(String, GroupCase)> = Vec::new();
    for n in [10_000usize, 100_000, 1_000_000] {
        let name = format!("groups: greedy N={n}");
        group_cases.push((
            name.clone(),
            Box::new(move || {
                let x = input(n as u64, n, 2000);
                groups_case(&name, &x, 128_000, Slicer::Greedy, &r::GreedySlice)
            }),
        ));
    }
    for n in [10_000usize, 100_000] {
        for knapsack in [false, true] {
            let name = format!(
                "groups: pipeline N={n} ({}), every item in a pair",
                if knapsack {
                    "Knapsack(100) + U-shaped"
                } else {
                    "Greedy + Chronological"
                }
            );
            group_cases.push((
                name.clone(),
                Box::new(move || {
                    let row = pipeline_groups_case(&name, n, knapsack);
                    [
                        Row {
                            name: String::new(),
                            ours: row.ours,
                            theirs: None,
                            cells: None,
                        },
                        row,
                    ]
                }),
            ));
        }
    }
    let name = "groups: quota(greedy) N=100000".to_string();
    group_cases.push((
        name.clone(),
        Box::new(move || {
            let x = input(100_001, 100_000, 2000);
            let entries = || quota_entries().into_iter();
            let ours = Quota::new(
                Slicer::Greedy,
                entries()
                    .map(|(k, req, cap)| QuotaEntry {
                        kind: k.into(),
                        require_percent: req,
                        cap_percent: cap,
                    })
                    .collect(),
            )
            .unwrap();
            let theirs = r::QuotaSlice::new(
                entries()
                    .map(|(k, req, cap)| {
                        r::QuotaEntry::new(r::ContextKind::new(k).unwrap(), req, cap).unwrap()
                    })
                    .collect(),
                Box::new(r::GreedySlice),
            )
            .unwrap();
            groups_case(&name, &x, 128_000, Slicer::Quota(ours), &theirs)
        }),
    ));
    let name = "groups: knapsack N=7800 (bucket 100)".to_string();
    group_cases.push((
        name.clone(),
        Box::new(move || {
            let x = input(7_800, 7_800, 2000);
            let theirs = r::KnapsackSlice::new(100).unwrap();
            groups_case(
                &name,
                &x,
                128_000,
                Slicer::Knapsack(Knapsack::new(100).unwrap()),
                &theirs,
            )
        }),
    ));
    for n in [1_000usize, 10_000, 100_000, 1_000_000] {
        let name = format!("greedy N={n}");
        cases.push((
            name.clone(),
            Box::new(move || {
                let x = input(n as u64, n, 2000);
                slice_case(&name, &x, 128_000, Slicer::Greedy, Some(&r::GreedySlice))
            }),
        ));
    }
    for (n, target, bucket) in [
        (780, 128_000, 100),
        (7_800, 128_000, 100),
        (780, 128_000, 10),
        (3_900, 128_000, 10),
        (78, 128_000, 1),
        (390, 128_000, 1),
    ] {
        let cells = n as f64 * (target / bucket + 1) as f64;
        let name = format!("knapsack {cells:.1e} cells (N={n}, bucket {bucket})");
        cases.push((
            name.clone(),
            Box::new(move || knapsack_case(&name, n, target, bucket, true)),
        ));
    }
    for (n, target, bucket, label) in [
        (
            3_900,
            128_000,
            1,
            "knapsack 5.0e8 cells (N=3900, bucket 1), libcupel only",
        ),
        (
            10_000,
            128_000,
            1,
            "knapsack exact 128k target x 10k items (1.28e9 cells, bucket 1), libcupel only",
        ),
    ] {
        cases.push((
            label.to_string(),
            Box::new(move || knapsack_case(label, n, target, bucket, false)),
        ));
    }
    let label = "knapsack DP kernel alone, 10k rows x 128,001 cells (1.28e9), libcupel only";
    cases.push((
        label.to_string(),
        Box::new(move || kernel_case(label, 10_000, 128_000)),
    ));
    for n in [10_000usize, 100_000] {
        let name = format!("quota(greedy) N={n}");
        cases.push((
            name.clone(),
            Box::new(move || {
                let x = input(n as u64 + 1, n, 2000);
                let ours = Quota::new(
                    Slicer::Greedy,
                    quota_entries()
                        .into_iter()
                        .map(|(k, req, cap)| QuotaEntry {
                            kind: k.into(),
                            require_percent: req,
                            cap_percent: cap,
                        })
                        .collect(),
                )
                .unwrap();
                let theirs = r::QuotaSlice::new(
                    quota_entries()
                        .into_iter()
                        .map(|(k, req, cap)| {
                            r::QuotaEntry::new(r::ContextKind::new(k).unwrap(), req, cap).unwrap()
                        })
                        .collect(),
                    Box::new(r::GreedySlice),
                )
                .unwrap();
                slice_case(&name, &x, 128_000, Slicer::Quota(ours), Some(&theirs))
            }),
        ));
        let name = format!("count_quota(greedy) N={n}");
        cases.push((
            name.clone(),
            Box::new(move || {
                let x = input(n as u64 + 2, n, 2000);
                let ours = CountQuota::new(Slicer::Greedy, ours_count_entries(), Scarcity::Degrade)
                    .unwrap();
                let theirs = r::CountQuotaSlice::new(
                    ref_count_entries(),
                    Box::new(r::GreedySlice),
                    r::ScarcityBehavior::Degrade,
                )
                .unwrap();
                slice_case(&name, &x, 128_000, Slicer::CountQuota(ours), Some(&theirs))
            }),
        ));
        let name = format!("count_constrained_knapsack N={n} (bucket 100, target 40000)");
        cases.push((
            name.clone(),
            Box::new(move || {
                let x = input(n as u64 + 3, n, 2000);
                let ours =
                    CountQuota::knapsack(100, ours_count_entries(), Scarcity::Degrade).unwrap();
                let theirs = r::CountConstrainedKnapsackSlice::new(
                    ref_count_entries(),
                    r::KnapsackSlice::new(100).unwrap(),
                    r::ScarcityBehavior::Degrade,
                )
                .unwrap();
                let mut row = slice_case(
                    &name,
                    &x,
                    40_000,
                    Slicer::CountKnapsack(ours),
                    Some(&theirs),
                );
                row.cells = Some(n as f64 * 401.0);
                row
            }),
        ));
    }
    cases.push(("abi N=10000".to_string(), Box::new(|| abi_case(10_000))));
    for n in [1_000usize, 10_000, 100_000] {
        for knapsack in [false, true] {
            let name = if knapsack {
                format!(
                    "pipeline N={n}: Composite(Recency, Kind) + dedup + Knapsack(100) + U-shaped"
                )
            } else {
                format!("pipeline N={n}: Composite(Recency, Kind) + dedup + Greedy + Chronological")
            };
            cases.push((
                name.clone(),
                Box::new(move || pipeline_case(&name, n, knapsack)),
            ));
        }
    }

    for (name, case) in &cases {
        if wanted(name) {
            print_row(&case());
        }
    }
    for (name, case) in &group_cases {
        if wanted(name) {
            for row in case().iter().filter(|r| !r.name.is_empty()) {
                print_row(row);
            }
        }
    }
}
