//! Every scenario under `examples/` plays: found by compiling each example (a `.sand` file or
//! a folder of them) and listing its scenarios that have forces, then run with a fixed seed.
//! Each must end with a result, and each side must have taken at least one action (a choice
//! of an `action`, not only set-up), so a scenario whose actions the engine cannot offer fails.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Example rulesets: the `.sand` files directly under `examples/` and the folders below it
/// that hold `.sand` files.
fn examples() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .expect("examples/ exists")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        let holds_sand = |d: &Path| {
            std::fs::read_dir(d).is_ok_and(|es| {
                es.filter_map(Result::ok)
                    .any(|e| e.path().extension().is_some_and(|x| x == "sand"))
            })
        };
        for p in entries {
            if p.is_dir() {
                if holds_sand(&p) {
                    out.push(p);
                } else {
                    walk(&p, out);
                }
            } else if p.extension().is_some_and(|x| x == "sand") && dir.ends_with("examples") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(Path::new("examples"), &mut out);
    out
}

#[test]
fn every_scenario_in_examples_runs_to_a_result_with_both_sides_acting() {
    let mut played = Vec::new();
    for path in examples() {
        let compiled = sandtable_compiler::compile_path(&path).expect("the example loads");
        assert!(
            !compiled.has_errors(),
            "{}: {:?}",
            path.display(),
            compiled.diagnostics
        );
        let program = &compiled.program;
        for sc in program.configs.iter().filter(|c| c.keyword == "scenario") {
            if !sc.blocks.iter().any(|b| b.keyword == "force") {
                continue;
            }
            let name = sc.name.clone().unwrap_or_default();
            let log = std::env::temp_dir().join(format!(
                "sandtable-example-{}-{name}.jsonl",
                std::process::id()
            ));
            let out = Command::new(env!("CARGO_BIN_EXE_sandtable"))
                .args(["run"])
                .arg(&path)
                .args(["--scenario", &name, "--seed", "1", "--log"])
                .arg(&log)
                .output()
                .expect("sandtable runs");
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && stdout.contains("Result:"),
                "{} {name}: {}{}",
                path.display(),
                stdout,
                String::from_utf8_lossy(&out.stderr)
            );
            let text = std::fs::read_to_string(&log).expect("the log is written");
            let _ = std::fs::remove_file(&log);
            let mut acting = BTreeSet::new();
            for line in text.lines() {
                let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
                if v["event"] == "decision"
                    && let (Some(side), Some(label)) = (v["side"].as_str(), v["label"].as_str())
                    && !label.starts_with("deploy ")
                    && !label.ends_with(" holds")
                {
                    acting.insert(side.to_string());
                }
            }
            let sides: BTreeSet<String> = sc
                .blocks
                .iter()
                .filter(|b| b.keyword == "force")
                .filter_map(|b| b.name.clone())
                .collect();
            assert_eq!(
                acting,
                sides,
                "{} {name}: not every side took an action",
                path.display()
            );
            played.push(format!("{}:{name}", path.display()));
        }
    }
    assert!(
        played
            .iter()
            .any(|p| p.contains("paddy_patrol:into_the_paddies")),
        "the tutorial's scenario was not found: {played:?}"
    );
}
