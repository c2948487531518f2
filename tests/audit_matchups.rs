//! `sandtable matchups` and the `impossible-matchup` lint of `check`, end to end.

use std::process::Command;

fn sandtable(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sandtable"))
        .args(args)
        .output()
        .expect("run sandtable");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A small ruleset of its own: a d6 plus attack must beat defence.
const DUEL: &str = r#"ruleset "Duel" { source: "test" }
side red "Red"
side blue "Blue"
section 1 "Units" {
  kind fighter { atk: int def: int }
  resolve strike(atk: 0..=10, def: 0..=10, charging: bool = false) {
    bands d6 + atk + (if charging then 2 else 0) - def {
      1.. => hit
      _ => miss
    }
  }
  action attack(a: fighter, t: fighter) {
    bands strike(a.atk, t.def, false) {
      hit => {}
      miss => {}
    }
  }
  unit weak: fighter "Weak" { atk: 1, def: 3 }
  unit strong: fighter "Strong" { atk: 5, def: 7 }
}
"#;

fn duel_dir(test: &str) -> std::path::PathBuf {
    let dir =
        std::env::temp_dir().join(format!("sandtable-matchups-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("duel.sand"), DUEL).unwrap();
    dir
}

#[test]
fn matchups_give_exact_chances_for_every_pairing_and_flag_the_impossible() {
    let dir = duel_dir("table");
    let path = dir.join("duel.sand");
    let p = path.to_str().unwrap();
    let (code, out, err) = sandtable(&["matchups", p]);
    assert_eq!(code, 0, "{err}");
    // Weak (atk 1) against Strong (def 7): d6 + 1 never exceeds 7.
    assert!(out.contains("case no modifier: chance of hit"), "{out}");
    assert!(
        out.contains("Weak against Strong: hit is impossible"),
        "{out}"
    );
    // Charging (+2) makes it possible: 5 or 6 + 1 + 2 - 7 ≥ 1.
    assert!(out.contains("case charging = yes"), "{out}");
    assert!(
        !out.contains("Weak against Strong (charging): hit is impossible"),
        "{out}"
    );
    // Strong against Weak: 1 + 5 - 3 = 3 ≥ 1, a certain hit.
    assert!(out.contains("Strong against Weak: hit is certain"), "{out}");

    let (code, out, _) = sandtable(&["matchups", p, "--json", "--case", "none"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let rows = v["matchups"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "2 × 2 pairings, one case");
    let ww = rows
        .iter()
        .find(|r| r["acting"] == "weak" && r["target"] == "weak")
        .unwrap();
    // d6 + 1 - 3 ≥ 1 on 3..6: 4/6.
    assert_eq!(ww["outcomes"][0]["outcome"], "hit");
    assert_eq!(ww["outcomes"][0]["probability"], "2/3");

    let (code, out, _) = sandtable(&["matchups", p, "--csv", "--case", "charging"]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with("action,resolution,case,acting,target,outcome,probability,decimal,flag\n")
    );
    assert!(
        out.contains("attack,strike,charging,weak,strong,hit,1/3,0.333333,\n"),
        "{out}"
    );

    let (code, _, err) = sandtable(&["matchups", p, "--case", "flanking"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--case flanking") && err.contains("none, charging"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn check_reports_impossible_matchups() {
    let dir = duel_dir("lint");
    let path = dir.join("duel.sand");
    let (code, out, _) = sandtable(&["check", "--json", path.to_str().unwrap()]);
    assert_eq!(code, 0);
    let v: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap();
    let lints: Vec<&serde_json::Value> = v
        .iter()
        .filter(|d| d["code"] == "sand::lint::impossible-matchup")
        .collect();
    assert_eq!(lints.len(), 2, "{lints:#?}");
    let m = lints[0]["message"].as_str().unwrap();
    assert!(
        m.contains("Weak can never get `hit`") && m.contains("Strong"),
        "{m}"
    );
    assert_eq!(lints[0]["line"], 12);
    let (_, out, _) = sandtable(&[
        "check",
        "--json",
        path.to_str().unwrap(),
        "--allow",
        "sand::lint::impossible-matchup",
    ]);
    assert!(!out.contains("impossible-matchup"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn plastic_battle_acc_two_never_hits_def_eight() {
    let (code, out, _) = sandtable(&["matchups", "rules/plastic_battle", "--case", "none"]);
    assert_eq!(code, 0);
    for a in ["Commander", "Charger"] {
        for t in ["Regular", "Charger", "Guard"] {
            assert!(
                out.contains(&format!("{a} against {t}: hit is impossible")),
                "{out}"
            );
        }
    }
}
