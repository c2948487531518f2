//! What the file-driven test harnesses share: listing case files, naming a trial after its
//! file, and comparing output with a recorded file (or re-recording it).

#![allow(dead_code)] // each harness uses its own subset

use std::path::{Path, PathBuf};

use libtest_mimic::Failed;

/// The files of `dir` with extension `ext`, sorted so trials run in a stable order.
pub fn case_files(dir: &str, ext: &str) -> Vec<PathBuf> {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    cases.sort();
    cases
}

pub fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `SANDTABLE_BLESS=1` re-records expected files instead of comparing with them.
pub fn bless() -> bool {
    std::env::var_os("SANDTABLE_BLESS").is_some_and(|v| v == "1")
}

/// Compares `actual` with the file `expected` (or writes it when blessing), naming the first
/// line that differs.
pub fn compare(expected: &Path, actual: &str, what: &str) -> Result<(), Failed> {
    if bless() {
        std::fs::write(expected, actual).map_err(|e| format!("{}: {e}", expected.display()))?;
        return Ok(());
    }
    let want = std::fs::read_to_string(expected).map_err(|e| {
        format!(
            "{}: {e} (record it with SANDTABLE_BLESS=1)",
            expected.display()
        )
    })?;
    if want == actual {
        return Ok(());
    }
    let line = want
        .lines()
        .zip(actual.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| want.lines().count().min(actual.lines().count()));
    Err(format!(
        "{what} differs from {} first at line {} (SANDTABLE_BLESS=1 re-records it; review the diff):\n  expected: {}\n  actual:   {}",
        expected.display(),
        line + 1,
        want.lines().nth(line).unwrap_or("<end>"),
        actual.lines().nth(line).unwrap_or("<end>"),
    )
    .into())
}
