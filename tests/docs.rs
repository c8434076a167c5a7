//! The documentation tells the truth: the README stays a way in (short, the
//! two commands first, every reference page linked), every relative link in
//! the README, docs/ and the binding READMEs leads to a file, and the
//! output docs/c-api.md shows for examples/pipeline.c is what it prints.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The markdown files whose links must resolve.
fn pages() -> Vec<PathBuf> {
    let root = common::root();
    let mut pages = vec![
        root.join("README.md"),
        root.join("BENCHMARKS.md"),
        root.join("SECURITY.md"),
    ];
    for dir in ["docs", "bindings"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "md") {
                pages.push(p);
            } else if p.join("README.md").exists() {
                pages.push(p.join("README.md"));
            }
        }
    }
    pages
}

/// The targets of the markdown links `[text](target)` of `text`.
fn links(text: &str) -> Vec<String> {
    // Code blocks hold no links (a C++ lambda `[](std::string t)` is none).
    let mut prose = String::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
        } else if !in_code {
            prose.push_str(line);
            prose.push('\n');
        }
    }
    let mut out = Vec::new();
    let mut rest = prose.as_str();
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        if let Some(end) = rest.find(')') {
            out.push(rest[..end].to_string());
            rest = &rest[end..];
        }
    }
    out
}

#[test]
fn every_relative_link_leads_to_a_file() {
    let mut bad = Vec::new();
    for page in pages() {
        let text = read(&page);
        for target in links(&text) {
            if target.contains("://") || target.starts_with('#') || target.starts_with("mailto:") {
                continue;
            }
            let path = target.split('#').next().unwrap();
            let file = page.parent().unwrap().join(path);
            if !file.exists() {
                bad.push(format!("{} -> {target}", page.display()));
            }
        }
    }
    assert!(bad.is_empty(), "links to nothing:\n{}", bad.join("\n"));
}

#[test]
fn the_readme_is_a_way_in() {
    let readme = read(&common::root().join("README.md"));
    let lines = readme.lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines; the reference goes in docs/"
    );
    // The two commands come first: within the first 30 lines.
    let head: String = readme.lines().take(30).collect::<Vec<_>>().join("\n");
    assert!(head.contains("bash examples/demo.sh"), "{head}");
    assert!(head.contains("bash tests/run_all.sh --install"), "{head}");
    // Every reference page is linked from the README.
    let linked = links(&readme);
    for e in std::fs::read_dir(common::root().join("docs")).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".md") {
            assert!(
                linked.iter().any(|l| l == &format!("docs/{name}")),
                "README.md does not link docs/{name}"
            );
        }
    }
}

#[test]
fn the_whole_pipeline_example_prints_what_the_c_api_page_shows() {
    let src = common::root().join("examples/pipeline.c");
    let exe = common::out_dir("docs").join("pipeline");
    common::build_c_program(&[&src], &exe, &[]);
    let scratch = common::out_dir("docs").join("run");
    std::fs::create_dir_all(scratch.join("target")).unwrap();
    let out = common::run(
        Command::new(&exe)
            .arg("target/report.json")
            .current_dir(&scratch),
        "examples/pipeline.c",
    );
    let page = read(&common::root().join("docs/c-api.md"));
    let shown = common::code_block_after(&page, "<!-- output of examples/pipeline.c -->");
    assert_eq!(out.trim_end(), shown.trim_end());

    // The JSON report it wrote: the SelectionReport of that run.
    let json: serde_json::Value =
        serde_json::from_str(&read(&scratch.join("target/report.json"))).unwrap();
    let included = json["included"].as_array().expect("included");
    let excluded = json["excluded"].as_array().expect("excluded");
    assert_eq!(included.len(), 5, "{json}");
    assert_eq!(excluded.len(), 4, "{json}");
    assert_eq!(included[0]["reason"]["reason"], "Pinned", "{json}");
    assert!(
        excluded
            .iter()
            .any(|d| d["reason"]["reason"] == "Deduplicated"),
        "{json}"
    );
}

#[test]
fn the_readme_python_example_prints_what_the_readme_shows() {
    if !common::have_toolchain("python3", "Debian's python3") {
        return;
    }
    let readme = read(&common::root().join("README.md"));
    let code = common::code_block_after(&readme, "<!-- the README's Python example -->");
    let shown = common::code_block_after(&readme, "<!-- output of the README's Python example -->");
    let script = common::out_dir("docs").join("readme_example.py");
    std::fs::write(&script, code).unwrap();
    let out = common::run(
        Command::new("python3")
            .arg(&script)
            .env("PYTHONPATH", common::root().join("bindings/python/src"))
            .env("CUPEL_LIB", common::release_lib_dir().join("libcupel.so")),
        "the README's Python example",
    );
    assert_eq!(out.trim_end(), shown.trim_end());
    // The C quick start prints the same decisions for the same candidates.
    let c_shown = common::code_block_after(&readme, "<!-- output of examples/quickstart.c -->");
    assert_eq!(shown.trim_end(), c_shown.trim_end());
}

#[test]
fn the_counting_tokens_example_is_the_file_and_prints_what_the_readme_shows() {
    let readme = read(&common::root().join("README.md"));
    let file = read(&common::root().join("examples/tokens.c"));
    // Every line of the README's excerpt is a line of the file, in order.
    let excerpt = common::code_block_after(&readme, "## Counting tokens");
    let lines: Vec<&str> = file.lines().map(str::trim).collect();
    let mut at = 0;
    for want in excerpt
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .skip(1)
    {
        at += lines[at..]
            .iter()
            .position(|l| *l == want)
            .unwrap_or_else(|| {
                panic!("README's line {want:?} is not in examples/tokens.c (in order)")
            });
    }
    let src = common::root().join("examples/tokens.c");
    let exe = common::out_dir("docs").join("tokens");
    common::build_c_program(&[&src], &exe, &[]);
    let out = common::run(&mut Command::new(&exe), "examples/tokens.c");
    let shown = common::code_block_after(&readme, "<!-- output of examples/tokens.c -->");
    assert_eq!(out.trim_end(), shown.trim_end());
}
