//! The library built without its vocabularies (`--no-default-features`):
//! it builds, `cupel_tokenizer_new` fails with CUPEL_ERROR_UNSUPPORTED and
//! a message that says how to build them in, and a vocabulary loaded from a
//! file still counts.

mod common;

use std::process::Command;

#[test]
fn without_the_vocabularies_tokenizers_load_files_only() {
    let target = common::root().join("target/no-vocabularies");
    common::run(
        Command::new(env!("CARGO"))
            .args([
                "build",
                "--lib",
                "--quiet",
                "--no-default-features",
                "--target-dir",
            ])
            .arg(&target)
            .current_dir(common::root()),
        "cargo build --no-default-features",
    );
    let lib = target.join("debug");
    let src = common::out_dir("features").join("check.c");
    std::fs::write(
        &src,
        r#"#include "cupel.h"
#include <stdio.h>
#include <string.h>
int main(void) {
  cupel_tokenizer *t = NULL;
  int64_t n = -1;
  /* the 256 single bytes and "ab", in tiktoken's format */
  static const char *b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char vocab[256 * 16], *at = vocab;
  int b;
  cupel_status st = cupel_tokenizer_new("o200k_base", &t);
  if (st != CUPEL_ERROR_UNSUPPORTED || t != NULL) return 1;
  if (!strstr(cupel_last_error(), "builtin-vocabularies")) return 2;
  for (b = 0; b < 256; b++) at += sprintf(at, "%c%c== %d\n", b64[b >> 2], b64[(b & 3) << 4], b);
  at += sprintf(at, "YWI= 256\n");
  if (cupel_tokenizer_from_tiktoken((const unsigned char *)vocab, (size_t)(at - vocab), NULL, &t) != CUPEL_OK) return 3;
  if (cupel_tokenizer_count(t, "abab", 4, &n) != CUPEL_OK || n != 2) return 4;
  cupel_tokenizer_free(t);
  puts("ok");
  return 0;
}
"#,
    )
    .unwrap();
    let exe = common::out_dir("features").join("check");
    let mut cc = common::compiler(false);
    cc.args(["-std=c99", "-I"])
        .arg(common::root().join("include"))
        .arg(&src)
        .arg("-L")
        .arg(&lib)
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .args(["-lcupel", "-o"])
        .arg(&exe);
    common::run(&mut cc, "compiling the check");
    // cargo test puts its own library directories on LD_LIBRARY_PATH, which
    // the loader searches before the program's run path.
    let out = common::run(
        Command::new(&exe).env_remove("LD_LIBRARY_PATH"),
        "the check",
    );
    assert_eq!(out.trim(), "ok");
}
