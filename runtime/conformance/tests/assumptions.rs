//! Assumption files: the names `check` and `run` give the book's unknowns are exactly the
//! names an assumptions file (and `--assume`) accepts, and a broken file is reported with
//! its line, column, code and cause.

use std::path::PathBuf;

use sandtable_conformance::assumptions;

/// Unknowns of every shape: per-side values, several in one procedure, table cells,
/// modifier entries, a die's faces, an entity's field.
const RULES: &str = r#"
side us "US"
side nva "NVA"
kind soldier { fire: int }
unit rifleman: soldier of us { fire: ? }
die scatter = ?
table hits(roll: d6) {
  1..=3 => ?
  4..=6 => ?
}
stack mods(cover: bool) {
  ? "cover" when cover
  ? "cover" when not cover
}
resolve shot(roll: d6) {
  if roll > ? { result ? } else { result ? + mods(true) }
}
board map: hex {
  columns: A..=C
  rows: 1..=3
}
activation cup: chip_cup {
  sides: us, nva
}
scenario first "First" {
  board: map
  turns: 2
  chips: us = ?, nva = ?
}
"#;

/// A file in a scratch folder of its own, removed with the folder when the test is done (the
/// tests run in parallel, so each has its own folder).
struct TempFile {
    dir: PathBuf,
    path: PathBuf,
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn temp_file(name: &str, text: &str) -> TempFile {
    let dir = std::env::temp_dir().join(format!("sandtable-assume-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    TempFile { dir, path }
}

#[test]
fn every_unknown_name_is_accepted_by_an_assumptions_file_and_by_assume() {
    let compiled = sandtable_compiler::compile_sources(&[("rules.sand", RULES)]);
    let errors: Vec<_> = compiled
        .diagnostics
        .iter()
        .filter(|d| d.severity == sandtable_compiler::Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let names: Vec<&str> = compiled
        .program
        .unknowns
        .iter()
        .map(|u| u.name.as_str())
        .collect();
    assert_eq!(names.len(), 11, "{names:?}");
    assert!(names.contains(&"scenario.first.chips.us"), "{names:?}");
    assert!(names.contains(&"scenario.first.chips.nva"), "{names:?}");
    let mut sorted = names.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len(), "names are distinct: {names:?}");

    let text: String = names
        .iter()
        .map(|n| format!("assume {n} = 1 \"round trip\"\n"))
        .collect();
    let file = temp_file("all.assume", &text);
    let a = assumptions(&compiled.program, &[], &[file.path.as_path()])
        .unwrap_or_else(|e| panic!("{e}\n--- file:\n{text}"));
    assert_eq!(a.values.len(), names.len());

    let pairs: Vec<(String, String)> = names.iter().map(|n| (n.to_string(), "1".into())).collect();
    let a = assumptions(&compiled.program, &pairs, &[]).expect("--assume takes the same names");
    assert_eq!(a.values.len(), names.len());
}

#[test]
fn a_broken_assumptions_file_names_line_column_code_and_cause() {
    let compiled = sandtable_compiler::compile_sources(&[("rules.sand", RULES)]);
    let file = temp_file(
        "broken.assume",
        "// per-side chips\nassume scenario.first.chips.us = 3\nassume chips#2 = 3\n",
    );
    let err =
        assumptions(&compiled.program, &[], &[file.path.as_path()]).expect_err("a syntax error");
    // Rendered like a `.sand` diagnostic: code, then the place as `file:line:column`.
    assert!(err.contains("sand::parse::syntax"), "{err}");
    assert!(err.contains("broken.assume:3:13]"), "{err}");
    assert!(err.contains("`#` cannot appear in a name"), "{err}");
}
