//! The invariants ARCHITECTURE.md states about the shape of the code, checked on the sources:
//! which crate may depend on which, that the runtime and the compiler name no encoded system,
//! and where `unsafe` may appear.

use std::path::{Path, PathBuf};

/// The `[dependencies]`, `[dev-dependencies]` and `[build-dependencies]` entries of a
/// manifest: the package names they list.
fn dependencies(manifest: &str) -> Vec<String> {
    let text = std::fs::read_to_string(manifest).unwrap_or_else(|e| panic!("{manifest}: {e}"));
    let mut in_deps = false;
    let mut names = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_deps = line.ends_with("dependencies]");
            continue;
        }
        if in_deps && let Some((name, _)) = line.split_once('=') {
            names.push(name.trim().split('.').next().unwrap_or("").to_string());
        }
    }
    names
}

#[test]
fn the_runtime_depends_on_neither_the_compiler_nor_the_grammar() {
    let deps = dependencies("runtime/Cargo.toml");
    assert!(deps.contains(&"sandtable-ir".to_string()), "{deps:?}");
    for banned in ["sandtable-compiler", "sandtable-grammar"] {
        assert!(
            !deps.contains(&banned.to_string()),
            "runtime/Cargo.toml lists {banned}: the IR crate is the only contract ({deps:?})"
        );
    }
}

#[test]
fn the_ir_crate_depends_on_serde_only() {
    assert_eq!(dependencies("compiler/ir/Cargo.toml"), vec!["serde"]);
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `(file, line number, line)` of every line of code (not a comment) under `dirs`.
fn code_lines(dirs: &[&str]) -> Vec<(String, usize, String)> {
    let mut files = Vec::new();
    for d in dirs {
        rust_files(Path::new(d), &mut files);
    }
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if !code.trim().is_empty() {
                out.push((f.display().to_string(), i + 1, code.to_string()));
            }
        }
    }
    out
}

/// The names of the systems in `rules/` (each folder's name, and its first word when that is
/// distinctive), found by listing the folder.
fn system_words() -> Vec<String> {
    let mut words = Vec::new();
    for e in std::fs::read_dir("rules").expect("rules/ exists") {
        let path = e.expect("a directory entry").path();
        if !path.is_dir() {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().to_lowercase();
        if let Some((first, _)) = name.split_once('_')
            && first.len() >= 5
        {
            words.push(first.to_string());
        }
        words.push(name);
    }
    assert!(words.len() >= 5, "{words:?}");
    words
}

#[test]
fn the_runtime_and_the_compiler_name_no_system() {
    let words = system_words();
    let found: Vec<String> = code_lines(&["runtime/src", "compiler/src"])
        .into_iter()
        .filter(|(_, _, l)| {
            let l = l.to_lowercase();
            words.iter().any(|w| l.contains(w.as_str()))
        })
        .map(|(f, n, l)| format!("{f}:{n}: {}", l.trim()))
        .collect();
    assert!(
        found.is_empty(),
        "game names in generic code (hand-written references belong in runtime/reference):\n{}",
        found.join("\n")
    );
}

/// Words one book uses for something every game may have (its fake pieces, its name for
/// alternating activation, its terrain field, its counter): generic code reads them through a
/// property the ruleset sets (`units:`, `alternating`, `entry_cost:`, `distance_counter:`).
const BOOK_WORDS: &[&str] = &["decoy", "impulse", "extra_entry_cost", "\"moved\""];

#[test]
fn the_runtime_and_the_compiler_use_no_book_word_as_a_key() {
    let found: Vec<String> = code_lines(&["runtime/src", "compiler/src"])
        .into_iter()
        .filter(|(_, _, l)| {
            let l = l.to_lowercase();
            BOOK_WORDS.iter().any(|w| l.contains(w))
        })
        .map(|(f, n, l)| format!("{f}:{n}: {}", l.trim()))
        .collect();
    assert!(
        found.is_empty(),
        "one book's words in generic code (read them through a property the ruleset sets):\n{}",
        found.join("\n")
    );
}

#[test]
fn unsafe_code_is_only_in_the_jit_and_each_block_says_why_it_is_sound() {
    let dirs = [
        "src",
        "grammar/src",
        "compiler",
        "runtime/src",
        "runtime/reference",
    ];
    let found: Vec<String> = code_lines(&dirs)
        .into_iter()
        .filter(|(f, _, l)| {
            l.contains("unsafe ") && !f.starts_with("runtime/src/jit/") && !f.contains("/target/")
        })
        .map(|(f, n, l)| format!("{f}:{n}: {}", l.trim()))
        .collect();
    assert!(
        found.is_empty(),
        "unsafe outside runtime/src/jit/:\n{}",
        found.join("\n")
    );
    let mut jit = Vec::new();
    rust_files(Path::new("runtime/src/jit"), &mut jit);
    for f in jit {
        let text = std::fs::read_to_string(&f).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if !(code.contains("unsafe {")
                || code.contains("unsafe extern")
                || code.contains("unsafe fn"))
            {
                continue;
            }
            // The reason sits in the comment lines just above (or on the line itself).
            let above = lines[i.saturating_sub(6)..=i].join("\n");
            assert!(
                above.contains("SAFETY:") || above.contains("# Safety"),
                "{}:{}: `unsafe` without a `// SAFETY:` comment",
                f.display(),
                i + 1
            );
        }
    }
}
