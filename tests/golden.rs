//! Golden diagnostics: every `tests/diagnostics/*.sand` file is checked and its rendered
//! diagnostics compared with a reviewed snapshot (one case per file, `cargo insta review`).

use std::path::Path;

use sandtable_compiler::diagnostic::render;

fn render_case(path: &Path) -> String {
    let compiled = sandtable_compiler::compile_path(path).expect("case file loads");
    let mut out = String::new();
    for d in &compiled.diagnostics {
        out.push_str(&render::to_plain_string(d, &compiled.db));
    }
    out.push_str(&format!(
        "-- {} error(s), {} warning(s)\n",
        compiled.errors(),
        compiled.warnings()
    ));
    out
}

#[test]
fn golden_diagnostics() {
    let dir = Path::new("tests/diagnostics");
    let mut cases: Vec<_> = std::fs::read_dir(dir)
        .expect("tests/diagnostics exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "sand"))
        .collect();
    cases.sort();
    assert!(
        cases.len() >= 30,
        "expected at least 30 golden cases, found {}",
        cases.len()
    );
    let mut codes = std::collections::BTreeSet::new();
    for case in &cases {
        let name = case.file_stem().unwrap().to_string_lossy().into_owned();
        let output = render_case(case);
        let compiled = sandtable_compiler::compile_path(case).expect("loads");
        assert!(
            !compiled.diagnostics.is_empty(),
            "{name}: a golden case must produce at least one diagnostic"
        );
        codes.extend(compiled.diagnostics.iter().map(|d| d.code));
        insta::with_settings!({ snapshot_path => "snapshots", prepend_module_to_snapshot => false }, {
            insta::assert_snapshot!(name, output);
        });
    }
    assert!(
        codes.len() >= 30,
        "golden cases cover only {} distinct codes: {codes:?}",
        codes.len()
    );
}
