//! Generates include/cupel.h with cbindgen (version pinned in Cargo.toml).
//! The header is committed; tests/header.rs fails when it is stale.

use std::env;
use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!(
        "cargo:rustc-env=CUPEL_BUILD_TARGET={}",
        env::var("TARGET").unwrap()
    );

    let mut config =
        cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml");
    let v = |part: &str| env::var(format!("CARGO_PKG_VERSION_{part}")).unwrap();
    config.after_includes = Some(format!(
        "\n/** Version of this header; cupel_version() gives the library's. */\n\
         #define CUPEL_VERSION_MAJOR {}\n#define CUPEL_VERSION_MINOR {}\n#define CUPEL_VERSION_PATCH {}\n\
         #define CUPEL_VERSION_STRING \"{}\"",
        v("MAJOR"),
        v("MINOR"),
        v("PATCH"),
        env::var("CARGO_PKG_VERSION").unwrap()
    ));
    let header = match cbindgen::Builder::new()
        .with_crate(&root)
        .with_config(config)
        .generate()
    {
        Ok(b) => b,
        Err(e) => {
            // A syntax error in src/ is reported by rustc with a better message.
            println!("cargo:warning=cbindgen could not generate the header: {e}");
            return;
        }
    };
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    header.write_to_file(out_dir.join("cupel.h"));
    println!(
        "cargo:rustc-env=CUPEL_GENERATED_HEADER={}",
        out_dir.join("cupel.h").display()
    );
    // Writes only when the content changed, so the committed file keeps its mtime.
    header.write_to_file(root.join("include/cupel.h"));
}
