//! `sandtable scenarios`: every scenario of a ruleset, read from the typed IR without playing
//! it: board, turns, sides and forces, activation, victory, and the book's unknowns it would
//! read with the assumptions files that supply them.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Value as Json, json};

use sandtable_compiler::ir::{
    self, BoardShape, Count, Deploy, Effect, Expr, Pieces, ProcKind, Program, ScenarioDef, Stmt,
    UnknownId, Value,
};

use crate::report::{self, EXIT_OK, Kind};

#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  sandtable scenarios rules/platoon\n  sandtable scenarios rules/plastic_battle --json"
)]
pub struct Args {
    /// Ruleset folder or .sand file
    ruleset: PathBuf,
    /// Print a JSON object instead of text
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> u8 {
    let compiled = match report::load_ruleset(&args.ruleset) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let program = &compiled.program;
    let files = match assumption_files(program, &args.ruleset) {
        Ok(f) => f,
        Err(e) => {
            report::error(Kind::Io, e);
            return report::EXIT_USAGE;
        }
    };
    let summaries: Vec<Json> = program
        .scenarios
        .iter()
        .map(|s| summary(program, s, &files))
        .collect();
    if args.json {
        report::print_json(&json!({
            "ruleset": program.name,
            "scenarios": summaries,
        }));
    } else {
        print_text(program, &summaries);
    }
    EXIT_OK
}

/// The `.assume` files of the ruleset's `assumptions/` folder, each with the unknowns it
/// gives values for (a file with problems gives none; `check` and `run` report them).
fn assumption_files(
    program: &Program,
    ruleset: &Path,
) -> Result<Vec<(String, BTreeSet<UnknownId>)>, String> {
    let dir = if ruleset.is_dir() {
        ruleset.join("assumptions")
    } else {
        ruleset.with_file_name("assumptions")
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "assume") && p.is_file())
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for p in paths {
        let text = sandtable_compiler::assume::read(&p)?;
        let name = format!(
            "assumptions/{}",
            p.file_name().unwrap_or_default().to_string_lossy()
        );
        let supplied = sandtable_compiler::assume::supply(program, &[], &[(name.clone(), text)])
            .map(|s| s.values.keys().copied().collect())
            .unwrap_or_default();
        out.push((name, supplied));
    }
    Ok(out)
}

/// The unknowns a scenario's set-up and play would read: its own block, the board played,
/// the turn and its phases and activations, the hooks and actions they run (and what those
/// call, look up and stack), and the stat lines of every piece named on the way.
pub(crate) fn needed(program: &Program, s: &ScenarioDef) -> BTreeSet<UnknownId> {
    let mut found = BTreeSet::new();
    let mut procs: Vec<u32> = Vec::new();
    let mut entities: BTreeSet<u32> = BTreeSet::new();
    let mut blocks: Vec<&ir::ConfigBlock> = vec![&program.configs[s.config as usize]];
    if let Some(b) = s.board_played {
        blocks.push(&program.configs[program.boards[b as usize].config as usize]);
    }
    for c in program.configs.iter().filter(|c| c.keyword == "turn") {
        blocks.push(c);
        for ph in &c.blocks {
            for p in ph.properties.iter().filter(|p| p.key == "activation") {
                for (_, e) in &p.values {
                    if let Expr::Const(Value::Symbol(n)) = e
                        && let Some(a) = program
                            .configs
                            .iter()
                            .find(|a| a.keyword == "activation" && a.name.as_deref() == Some(&**n))
                    {
                        blocks.push(a);
                    }
                }
            }
        }
    }
    let mut i = 0;
    while i < blocks.len() {
        let b = blocks[i];
        i += 1;
        procs.extend(b.hooks.iter().map(|(_, p)| *p));
        for p in &b.properties {
            for (_, e) in &p.values {
                if let Expr::Const(Value::Symbol(n)) = e
                    && p.key == "actions"
                    && let Some((id, _)) = program.proc_by_name(n)
                {
                    procs.push(id);
                }
                consts(e, &mut found, &mut entities);
            }
        }
        blocks.extend(b.blocks.iter());
    }
    for f in &s.forces {
        for p in f.units.iter().chain(&f.markers).chain(&f.reserve) {
            match p {
                Pieces::Of { entity, .. } => {
                    entities.insert(*entity);
                }
                Pieces::Unknown(u) => {
                    found.insert(*u);
                }
            }
        }
    }
    let mut seen_procs = BTreeSet::new();
    let (mut stacks, mut tables) = (BTreeSet::new(), BTreeSet::new());
    while let Some(p) = procs.pop() {
        if !seen_procs.insert(p) {
            continue;
        }
        let def = &program.procs[p as usize];
        for param in &def.params {
            if let Some(v) = &param.default {
                value(v, &mut found, &mut entities);
            }
        }
        ir::visit_stmts(&def.body, false, &mut |e, _| {
            e.walk(&mut |x| match x {
                Expr::Call { proc, .. } => procs.push(*proc),
                Expr::Stack { stack, .. } => {
                    stacks.insert(*stack);
                }
                Expr::Lookup { table, .. } => {
                    tables.insert(*table);
                }
                Expr::Const(v) => value(v, &mut found, &mut entities),
                _ => {}
            })
        });
        for st in ir::stmts_post_order(&def.body) {
            if let Stmt::Effect(Effect::Undecided(u)) = st {
                found.insert(*u);
            }
        }
    }
    for st in stacks {
        for entry in &program.stacks[st as usize].entries {
            for e in [Some(&entry.value), entry.per.as_ref(), entry.when.as_ref()]
                .into_iter()
                .flatten()
            {
                consts(e, &mut found, &mut entities);
            }
        }
    }
    for t in tables {
        for row in &program.tables[t as usize].rows {
            for c in &row.cells {
                value(c, &mut found, &mut entities);
            }
        }
    }
    for e in entities {
        for (_, v) in &program.entities[e as usize].fields {
            value(v, &mut found, &mut BTreeSet::new());
        }
    }
    found
}

fn consts(e: &Expr, found: &mut BTreeSet<UnknownId>, entities: &mut BTreeSet<u32>) {
    e.walk(&mut |x| {
        if let Expr::Const(v) = x {
            value(v, found, entities)
        }
    });
}

fn value(v: &Value, found: &mut BTreeSet<UnknownId>, entities: &mut BTreeSet<u32>) {
    match v {
        Value::Unknown(u) => {
            found.insert(*u);
        }
        Value::Entity(e) => {
            entities.insert(*e);
        }
        Value::List(items) => items.iter().for_each(|i| value(i, found, entities)),
        _ => {}
    }
}

fn count(n: Option<Count>, program: &Program) -> Json {
    match n {
        Some(Count::Fixed(n)) => json!(n),
        Some(Count::Unknown(u)) => json!(format!("? ({})", program.unknowns[u as usize].name)),
        None => Json::Null,
    }
}

fn summary(program: &Program, s: &ScenarioDef, files: &[(String, BTreeSet<UnknownId>)]) -> Json {
    let board = |b: Option<u32>| b.map(|b| &program.boards[b as usize]);
    let played = board(s.board_played);
    let shape = played.map_or(Json::Null, |b| match &b.shape {
        BoardShape::Hex { columns, rows } => json!(format!(
            "hex {}..={}, 1..={rows} ({} hexes)",
            ir::HexLabel::column_name(1),
            ir::HexLabel::column_name(*columns),
            columns * rows
        )),
        BoardShape::Table { width, depth } => json!(format!(
            "table {} x {}",
            program.show_length(*width),
            program.show_length(*depth)
        )),
        BoardShape::Unknown => json!(format!(
            "{} (size not given)",
            b.scheme.as_deref().unwrap_or("?")
        )),
    });
    let forces: Vec<Json> = s
        .forces
        .iter()
        .map(|f| {
            let list = |p: &[Pieces]| -> Vec<Json> {
                p.iter()
                    .map(|x| match x {
                        Pieces::Of { entity, count } => json!({
                            "piece": program.entities[*entity as usize].name,
                            "count": count,
                        }),
                        Pieces::Unknown(u) => json!({
                            "unknown": program.unknowns[*u as usize].name,
                        }),
                    })
                    .collect()
            };
            json!({
                "side": program.sides[f.side as usize].name,
                "units": f.unit_count(),
                "markers": f.marker_count(),
                "pieces": list(&f.units),
                "marker_pieces": list(&f.markers),
                "reserve": f.reserve_count(),
                "reserve_pieces": list(&f.reserve),
                "deploy": f.deploy.as_ref().map(|d| deploy(program, d)),
                "hidden": f.hidden,
            })
        })
        .collect();
    let mut activation = Vec::new();
    for t in program.configs.iter().filter(|c| c.keyword == "turn") {
        for ph in &t.blocks {
            for p in ph.properties.iter().filter(|p| p.key == "activation") {
                for (_, e) in &p.values {
                    if let Expr::Const(Value::Symbol(n)) = e {
                        let scheme = program
                            .configs
                            .iter()
                            .find(|a| a.keyword == "activation" && a.name.as_deref() == Some(&**n))
                            .and_then(|a| a.scheme.clone());
                        activation.push(json!({
                            "phase": ph.name,
                            "activation": n,
                            "scheme": scheme,
                        }));
                    }
                }
            }
        }
    }
    let need = needed(program, s);
    let default_file = format!("assumptions/{}.assume", s.name.replace('_', "-"));
    let supplied_by: Vec<Json> = files
        .iter()
        .filter(|(_, set)| need.iter().any(|u| set.contains(u)))
        .map(|(f, set)| {
            json!({
                "file": f,
                "read_by_run": *f == default_file
                    || *f == format!("assumptions/{}.assume", s.name),
                "supplies": need.iter().filter(|u| set.contains(u)).count(),
            })
        })
        .collect();
    let default_set = files
        .iter()
        .find(|(f, _)| *f == default_file || *f == format!("assumptions/{}.assume", s.name))
        .map(|(_, set)| set);
    let missing: Vec<&str> = need
        .iter()
        .filter(|u| default_set.is_none_or(|set| !set.contains(u)))
        .map(|u| program.unknowns[*u as usize].name.as_str())
        .collect();
    json!({
        "name": s.name.replace('_', "-"),
        "title": s.title,
        "section": s.cite.section.map(|id| program.sections[id as usize].label()),
        "board": board(s.board).map(|b| &b.name),
        "board_played": played.map(|b| &b.name),
        "stand_in": s.board != s.board_played,
        "board_shape": shape,
        "turns": count(s.turns, program),
        "turns_from_limit": s.turns_from_limit,
        "sides": forces.iter().map(|f| f["side"].clone()).collect::<Vec<_>>(),
        "forces": forces,
        "neutral_pieces": s.neutral.iter().map(|n| n.pieces.len()).sum::<usize>(),
        "activation": activation,
        "victory": victory(program, s),
        "unknowns": need.iter().map(|u| &program.unknowns[*u as usize].name).collect::<Vec<_>>(),
        "assumption_files": supplied_by,
        "default_file": default_file,
        "default_file_exists": default_set.is_some(),
        "unknowns_not_in_default_file": missing,
    })
}

fn deploy(program: &Program, d: &Deploy) -> String {
    let range = |r: Option<(u32, u32)>, f: &dyn Fn(u32) -> String| {
        r.map(|(lo, hi)| {
            if hi == u32::MAX {
                format!("{}..", f(lo))
            } else {
                format!("{}..={}", f(lo), f(hi))
            }
        })
    };
    match d {
        Deploy::Hexes { columns, rows } => {
            let mut parts = Vec::new();
            if let Some(c) = range(*columns, &ir::HexLabel::column_name) {
                parts.push(format!("columns {c}"));
            }
            if let Some(r) = range(*rows, &|n| n.to_string()) {
                parts.push(format!("rows {r}"));
            }
            if parts.is_empty() {
                "the whole board".into()
            } else {
                parts.join(", ")
            }
        }
        Deploy::Area(a) => format!("area {a}"),
        Deploy::Unknown(u) => format!("? ({})", program.unknowns[*u as usize].name),
        Deploy::Described(t) => format!("\"{t}\""),
    }
}

/// Who the victory block can declare the winner, whom it scores, and whether the book
/// leaves the winner unknown (`win ?`).
fn victory(program: &Program, s: &ScenarioDef) -> Json {
    let Some(v) = s.victory else {
        return Json::Null;
    };
    let def = &program.procs[v as usize];
    debug_assert_eq!(def.kind, ProcKind::Hook);
    let (mut wins, mut scores, mut undecided) = (Vec::new(), Vec::new(), false);
    for st in ir::stmts_post_order(&def.body) {
        match st {
            Stmt::Effect(Effect::Win(side)) => {
                let n = &program.sides[*side as usize].name;
                if !wins.contains(n) {
                    wins.push(n.clone());
                }
            }
            Stmt::Effect(Effect::Score { side, .. }) => {
                let n = &program.sides[*side as usize].name;
                if !scores.contains(n) {
                    scores.push(n.clone());
                }
            }
            Stmt::Effect(Effect::Undecided(_)) => undecided = true,
            _ => {}
        }
    }
    json!({
        "section": def.cite.section.map(|id| program.sections[id as usize].label()),
        "wins": wins,
        "scores": scores,
        "undecided": undecided,
    })
}

fn print_text(program: &Program, summaries: &[Json]) {
    if summaries.is_empty() {
        println!("{}: no scenarios", program.name);
        return;
    }
    println!(
        "{}: {}",
        program.name,
        report::plural(summaries.len(), "scenario")
    );
    let s = |v: &Json| match v {
        Json::String(s) => s.clone(),
        Json::Null => "-".into(),
        other => other.to_string(),
    };
    for sc in summaries {
        println!();
        let section = match &sc["section"] {
            Json::String(x) => format!(" ({x})"),
            _ => String::new(),
        };
        println!("{} \"{}\"{section}", s(&sc["name"]), s(&sc["title"]));
        let board = if sc["stand_in"] == json!(true) {
            format!(
                "{}, played on the stand-in {}",
                s(&sc["board"]),
                s(&sc["board_played"])
            )
        } else {
            s(&sc["board"])
        };
        println!("  board: {board}: {}", s(&sc["board_shape"]));
        println!(
            "  turns: {}{}",
            s(&sc["turns"]),
            if sc["turns_from_limit"] == json!(true) {
                " (the turn block's limit)"
            } else {
                ""
            }
        );
        let acts: Vec<String> = sc["activation"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| format!("{} ({})", s(&a["scheme"]), s(&a["phase"])))
            .collect();
        println!(
            "  activation: {}",
            if acts.is_empty() {
                "none".to_string()
            } else {
                acts.join(", ")
            }
        );
        if sc["forces"].as_array().is_none_or(Vec::is_empty) {
            println!("  forces: none given");
        }
        for f in sc["forces"].as_array().into_iter().flatten() {
            let units = match &f["units"] {
                Json::Null => "? units".to_string(),
                n => report::plural(n.as_u64().unwrap_or(0) as usize, "unit"),
            };
            let markers = match &f["markers"] {
                Json::Number(n) if n.as_u64() == Some(0) => String::new(),
                Json::Null => ", ? markers".into(),
                n => format!(
                    ", {}",
                    report::plural(n.as_u64().unwrap_or(0) as usize, "marker")
                ),
            };
            // Pieces held off the table, when the force lists any.
            let reserve = match &f["reserve"] {
                Json::Null => ", ? in reserve".to_string(),
                Json::Number(n) if n.as_u64() == Some(0) => String::new(),
                n => format!(", {} in reserve", n.as_u64().unwrap_or(0)),
            };
            println!(
                "  force {}: {units}{markers}{reserve}, deploys in {}{}",
                s(&f["side"]),
                s(&f["deploy"]),
                if f["hidden"] == json!(true) {
                    ", hidden"
                } else {
                    ""
                }
            );
        }
        let n = sc["neutral_pieces"].as_u64().unwrap_or(0);
        if n > 0 {
            println!("  neutral pieces: {n}");
        }
        let v = &sc["victory"];
        if v.is_null() {
            println!("  victory: none given");
        } else {
            let names = |k: &str| -> String {
                v[k].as_array()
                    .into_iter()
                    .flatten()
                    .map(&s)
                    .collect::<Vec<_>>()
                    .join(" or ")
            };
            let mut parts = Vec::new();
            if !names("wins").is_empty() {
                parts.push(format!("{} may win", names("wins")));
            }
            if v["undecided"] == json!(true) {
                parts.push("the book leaves a winner unknown (`win ?`)".into());
            }
            if !names("scores").is_empty() {
                parts.push(format!("scores {}", names("scores").replace(" or ", ", ")));
            }
            let section = match &v["section"] {
                Json::String(x) => format!(" ({x})"),
                _ => String::new(),
            };
            if parts.is_empty() {
                parts.push("declares no winner and scores no side".into());
            }
            println!("  victory{section}: {}", parts.join("; "));
        }
        let unknowns = sc["unknowns"].as_array().map_or(0, Vec::len);
        println!(
            "  assumptions: {} it may read",
            report::plural(unknowns, "unknown")
        );
        for f in sc["assumption_files"].as_array().into_iter().flatten() {
            println!(
                "    {} supplies {}{}",
                s(&f["file"]),
                f["supplies"],
                if f["read_by_run"] == json!(true) {
                    " (read by `run` for this scenario)"
                } else {
                    ""
                }
            );
        }
        let missing: Vec<String> = sc["unknowns_not_in_default_file"]
            .as_array()
            .into_iter()
            .flatten()
            .map(&s)
            .collect();
        if !missing.is_empty() {
            const SHOWN: usize = 8;
            let more = if missing.len() > SHOWN {
                format!(", and {} more", missing.len() - SHOWN)
            } else {
                String::new()
            };
            let file = if sc["default_file_exists"] == json!(true) {
                "not in"
            } else {
                "no"
            };
            println!(
                "    {file} {}: {}{more}",
                s(&sc["default_file"]),
                missing[..missing.len().min(SHOWN)].join(", ")
            );
        }
    }
}
