//! The binding contract table (tests/contract/contract.txt): which rows
//! each language runs, and the check that a runner ran all of them.
#![allow(dead_code)]

use std::path::PathBuf;

/// The seven languages of the table, as its `where` column spells them.
pub const LANGUAGES: [&str; 7] = ["c", "cpp", "go", "cs", "py", "js", "lua"];

pub fn path() -> PathBuf {
    super::root().join("tests/contract/contract.txt")
}

/// One row of the table.
#[derive(Debug, Clone)]
pub struct Row {
    pub id: String,
    pub op: String,
    pub arg: String,
    pub value: String,
    pub expect: String,
    pub langs: Vec<&'static str>,
}

fn langs_of(place: &str) -> Vec<&'static str> {
    match place {
        "all" => LANGUAGES.to_vec(),
        "dyn" => vec!["py", "js", "lua"],
        "handles" => LANGUAGES[1..].to_vec(),
        list => list
            .split(',')
            .map(|l| {
                *LANGUAGES
                    .iter()
                    .find(|k| **k == l)
                    .unwrap_or_else(|| panic!("contract.txt: unknown language {l:?}"))
            })
            .collect(),
    }
}

/// Every row of the table, checked for shape (six fields, unique ids).
pub fn rows() -> Vec<Row> {
    let text = std::fs::read_to_string(path()).unwrap();
    let mut rows: Vec<Row> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with('@') {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f.len(), 6, "contract.txt:{}: not six fields: {line}", n + 1);
        assert!(
            rows.iter().all(|r| r.id != f[0]),
            "contract.txt:{}: the id {} is used twice",
            n + 1,
            f[0]
        );
        rows.push(Row {
            id: f[0].into(),
            op: f[1].into(),
            arg: f[2].into(),
            value: f[3].into(),
            expect: f[4].into(),
            langs: langs_of(f[5]),
        });
    }
    rows
}

/// How many rows name `lang`.
pub fn rows_for(lang: &str) -> usize {
    rows().iter().filter(|r| r.langs.contains(&lang)).count()
}

/// Checks a runner's output: its summary line `contract <lang>: N passed,
/// M failed` must count every row that names the language, none failed.
pub fn check_summary(lang: &str, output: &str) {
    let prefix = format!("contract {lang}: ");
    let line = output
        .lines()
        .find(|l| l.trim_start().starts_with(&prefix))
        .unwrap_or_else(|| panic!("no `{prefix}N passed, M failed` line in:\n{output}"));
    let want = format!("{prefix}{} passed, 0 failed", rows_for(lang));
    assert_eq!(line.trim(), want, "the {lang} contract runner:\n{output}");
}
