//! `sandtable-conformance`: the runtime run on compiled `.sand` programs. The runtime's own
//! tests build IR by hand, since the runtime depends on neither the compiler nor the grammar;
//! every test that needs a program written in the language lives here, in `tests/`.
//! This library holds the helpers those tests share.

use std::path::{Path, PathBuf};

/// The workspace root, where `rules/` and `examples/` are.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// One source compiled as `case.sand`; any error fails the test, showing the source and the
/// errors.
pub fn compile_clean(src: &str) -> sandtable_compiler::Compiled {
    let c = sandtable_compiler::compile_sources(&[("case.sand", src)]);
    let errors: Vec<_> = c
        .diagnostics
        .iter()
        .filter(|d| d.severity == sandtable_compiler::Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{src}\n{errors:#?}");
    c
}

/// The runtime's assumptions from `--assume` pairs and assumptions files, typed by the
/// compiler as the CLI does; a refusal is its rendered text.
pub fn assumptions(
    program: &sandtable_ir::Program,
    pairs: &[(String, String)],
    files: &[&Path],
) -> Result<sandtable_runtime::interp::Assumptions, String> {
    sandtable_compiler::assume::supply_paths(program, pairs, files)
        .map(|s| sandtable_runtime::query::assumptions(&s))
        .map_err(|e| e.to_string())
}

/// The system folders under `rules/`, found by listing it, in name order.
pub fn systems() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(root().join("rules"))
        .expect("rules/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    found.sort();
    found
}
