//! `sandtable run`, `replay` and `sim`: whole scenarios played by policies.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use sandtable_compiler::ir::Program;
use sandtable_runtime::engine::log::{self, Event, Header, LOG_FORMAT, LOG_VERSION};
use sandtable_runtime::engine::policy::{self, Scripted};
use sandtable_runtime::engine::sim::{self, Totals};
use sandtable_runtime::engine::state::Winner;
use sandtable_runtime::engine::{Game, GameResult, Rules};
use sandtable_runtime::interp::Assumptions;
use sandtable_runtime::jit::{BackendKind, JitProgram};
use sandtable_runtime::query;
use serde::Serialize;

use crate::report::{self, BackendArg, EXIT_FINDINGS, EXIT_OK, EXIT_USAGE};

/// What `run` and `sim` share: the ruleset, the scenario, the policies, the book's unknowns.
#[derive(clap::Args)]
pub struct GameArgs {
    /// Ruleset folder or .sand file
    ruleset: PathBuf,
    /// Scenario to play (as named in the rules; `-` and `_` are the same)
    #[arg(long)]
    scenario: String,
    /// Policy for a side: SIDE=random|greedy|human|script:FILE (repeatable; default random)
    #[arg(long = "policy", value_name = "SIDE=KIND")]
    policies: Vec<String>,
    /// Supply a value for one of the book's unknowns: NAME=VALUE (repeatable)
    #[arg(long = "assume", value_name = "NAME=VALUE")]
    assumes: Vec<String>,
    /// Assumptions file (repeatable). RULESET/assumptions/SCENARIO.assume is read by default
    #[arg(long = "assumptions", value_name = "FILE")]
    assumption_files: Vec<PathBuf>,
    /// Run rule procedures on the interpreter or on JIT-compiled code (same results)
    #[arg(long, value_enum, default_value_t = BackendArg::Jit)]
    backend: BackendArg,
}

#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  sandtable run rules/platoon --scenario protecting-the-flank --seed 1\n  \
sandtable run rules/plastic_battle --scenario total-destruction --seed 1 --log game.jsonl\n  \
sandtable run rules/platoon --scenario protecting-the-flank --policy us=human"
)]
pub struct RunArgs {
    #[command(flatten)]
    game: GameArgs,
    /// Seed of the game (dice, chips and the policies' own choices)
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write the game's events as JSON lines to FILE (for `replay`)
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Print the result as JSON instead of the narrative
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
#[command(
    after_help = "Example:\n  sandtable run rules/platoon --scenario protecting-the-flank --seed 1 --log game.jsonl\n  sandtable replay game.jsonl"
)]
pub struct ReplayArgs {
    /// A log written by `sandtable run --log`
    log: PathBuf,
    /// Read the rules from here instead of the path the log records
    #[arg(long)]
    ruleset: Option<PathBuf>,
    /// Print the result as JSON instead of the narrative
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  sandtable sim rules/platoon --scenario protecting-the-flank -n 10000 --json\n  \
sandtable sim rules/plastic_battle --scenario total-destruction -n 1000 --policy player_1=greedy --jobs 2"
)]
pub struct SimArgs {
    #[command(flatten)]
    game: GameArgs,
    /// Number of games
    #[arg(short = 'n', default_value_t = 1000)]
    n: u64,
    /// Seed of the first game; game i uses seed+i (so `run --seed` replays any one of them)
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Threads (default: all cores). Totals do not depend on it
    #[arg(long)]
    jobs: Option<usize>,
    /// Print the figures as JSON
    #[arg(long)]
    json: bool,
    /// Also play the same games with a hand-written Rust playout and report the speed ratio
    /// (`platoon-flank`: Platoon's Protecting the Flank, random against random)
    #[arg(long, value_enum)]
    reference: Option<ReferenceArg>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum ReferenceArg {
    PlatoonFlank,
}

/// Most games one `sim` may play.
const MAX_GAMES: u64 = 100_000_000;

struct Loaded {
    program: Program,
    assumptions: Assumptions,
    files: Vec<String>,
    hash: String,
}

fn default_assumptions(ruleset: &Path, scenario: &str) -> Option<PathBuf> {
    let dir = ruleset.join("assumptions");
    [scenario.replace('_', "-"), scenario.replace('-', "_")]
        .into_iter()
        .map(|n| dir.join(format!("{n}.assume")))
        .find(|p| p.is_file())
}

fn load(
    ruleset: &Path,
    scenario: &str,
    assumes: &[String],
    files: &[PathBuf],
    defaults: bool,
) -> Result<Loaded, u8> {
    let compiled = report::load_ruleset(ruleset)?;
    let mut paths: Vec<PathBuf> = Vec::new();
    if defaults && let Some(p) = default_assumptions(ruleset, scenario) {
        paths.push(p);
    }
    paths.extend(files.iter().cloned());
    let pairs = report::pairs(assumes, "--assume")?;
    let refs: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    let assumptions = query::assumptions(&compiled.program, &pairs, &refs).map_err(|e| {
        eprintln!("error: {e}");
        EXIT_USAGE
    })?;
    let mut bytes = serde_json::to_vec(&compiled.program).unwrap_or_default();
    for p in &paths {
        bytes.extend(std::fs::read(p).unwrap_or_default());
    }
    for (k, v) in &pairs {
        bytes.extend(format!("{k}={v}").bytes());
    }
    Ok(Loaded {
        program: compiled.program,
        assumptions,
        files: paths.iter().map(|p| p.display().to_string()).collect(),
        hash: log::fingerprint(&bytes),
    })
}

fn rules<'p>(l: &'p Loaded, scenario: &str) -> Result<Rules<'p>, u8> {
    Rules::new(&l.program, &l.assumptions, scenario).map_err(|e| {
        eprintln!("error: {e}");
        EXIT_FINDINGS
    })
}

/// Policy kind per side id, from `SIDE=KIND` options; unnamed sides play `random`.
fn policy_kinds(program: &Program, items: &[String]) -> Result<Vec<String>, u8> {
    let mut kinds = vec!["random".to_string(); program.sides.len()];
    for (side, kind) in report::pairs(items, "--policy")? {
        let Some(s) = program.sides.iter().position(|x| x.name == side) else {
            let names: Vec<&str> = program.sides.iter().map(|x| x.name.as_str()).collect();
            eprintln!(
                "error: --policy: no side `{side}`; the sides are: {}",
                names.join(", ")
            );
            return Err(EXIT_USAGE);
        };
        if !policy::is_kind(&kind) {
            eprintln!(
                "error: --policy: unknown policy `{kind}`; policies are: {}",
                policy::KINDS.join(", ")
            );
            return Err(EXIT_USAGE);
        }
        kinds[s] = kind;
    }
    Ok(kinds)
}

/// Compiled code for the rules when `kind` asks for it and the JIT starts here.
fn jit_for(l: &Loaded, kind: BackendKind) -> Option<JitProgram<'_>> {
    match kind {
        BackendKind::Interp => None,
        BackendKind::Jit => report::backend(&l.program, &l.assumptions, BackendArg::Jit).jit,
    }
}

/// What `run` and `sim` start from: the rules with their assumptions, and the policy kinds.
fn load_game(a: &GameArgs) -> Result<(Loaded, Vec<String>), u8> {
    let loaded = load(
        &a.ruleset,
        &a.scenario,
        &a.assumes,
        &a.assumption_files,
        true,
    )?;
    let kinds = policy_kinds(&loaded.program, &a.policies)?;
    Ok((loaded, kinds))
}

/// The lines before the narrative: what is being played, and what is not from the book.
fn preamble(h: &Header, r: &Rules) -> Vec<String> {
    let mut v = vec![format!(
        "{}: {} (seed {})",
        h.ruleset, r.scenario_title, h.seed
    )];
    match &r.stand_in_for {
        Some(b) => v.push(format!(
            "board: {} (a stand-in for `{b}`; not from the book)",
            r.board_name
        )),
        None => v.push(format!("board: {}", r.board_name)),
    }
    if !h.assumptions.is_empty() {
        v.push(format!(
            "assumptions (not from the book): {}",
            h.assumptions.join(", ")
        ));
    }
    if !h.assume.is_empty() {
        v.push(format!(
            "assumed on the command line: {}",
            h.assume
                .iter()
                .map(|(k, x)| format!("{k}={x}"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if !r.turns_printed {
        v.push(format!(
            "turns: no limit given; the game stops after {}",
            r.turns
        ));
    }
    v.push(format!(
        "policies: {}",
        h.policies
            .iter()
            .map(|(s, k)| format!("{s}={k}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    v
}

fn print_story(pre: &[String], events: &[Event]) {
    let mut out = std::io::stdout().lock();
    for l in pre {
        let _ = writeln!(out, "{l}");
    }
    for e in events {
        let _ = writeln!(out, "{}", log::narrate(e));
    }
}

#[derive(Serialize)]
struct ResultJson<'a> {
    ruleset: &'a str,
    scenario: &'a str,
    seed: u64,
    winner: Option<String>,
    turns: u32,
    scores: Vec<(String, i64)>,
    losses: Vec<(String, u32)>,
    decisions: u32,
}

fn result_json<'a>(h: &'a Header, r: &Rules, g: &GameResult) -> ResultJson<'a> {
    let sides = r.sides();
    ResultJson {
        ruleset: &h.ruleset,
        scenario: &h.scenario,
        seed: h.seed,
        winner: match g.winner {
            Winner::Side(s) => Some(r.side_name(s).to_string()),
            Winner::Draw => None,
        },
        turns: g.turns,
        scores: sides
            .iter()
            .map(|s| (r.side_name(*s).to_string(), g.scores[*s as usize]))
            .collect(),
        losses: sides
            .iter()
            .map(|s| (r.side_name(*s).to_string(), g.losses[*s as usize]))
            .collect(),
        decisions: g.decisions,
    }
}

pub fn run(args: RunArgs) -> u8 {
    let a = &args.game;
    let (loaded, kinds) = match load_game(a) {
        Ok(x) => x,
        Err(c) => return c,
    };
    let rules = match rules(&loaded, &a.scenario) {
        Ok(r) => r,
        Err(c) => return c,
    };
    let backend = a.backend.kind();
    let jit = jit_for(&loaded, backend);
    let header = Header {
        format: LOG_FORMAT.into(),
        version: LOG_VERSION,
        ruleset: loaded.program.name.clone(),
        ruleset_path: a.ruleset.display().to_string(),
        ruleset_hash: loaded.hash.clone(),
        scenario: rules.scenario.clone(),
        seed: args.seed,
        backend: backend.name().into(),
        policies: rules
            .sides()
            .iter()
            .map(|s| (rules.side_name(*s).to_string(), kinds[*s as usize].clone()))
            .collect(),
        assumptions: loaded.files.clone(),
        assume: report::pairs(&a.assumes, "--assume").unwrap_or_default(),
    };
    let mut policies = match policy::for_sides(&kinds, args.seed) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let mut game = Game::new(&rules, args.seed, jit.as_ref());
    let result = match game.play(&mut policies) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_FINDINGS;
        }
    };
    if let Some(path) = &args.log {
        let mut text = serde_json::to_string(&header).unwrap_or_default();
        for e in &game.events {
            text.push('\n');
            text.push_str(&serde_json::to_string(e).unwrap_or_default());
        }
        text.push('\n');
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return EXIT_USAGE;
        }
    }
    if args.json {
        report::print_json(&result_json(&header, &rules, &result));
    } else {
        print_story(&preamble(&header, &rules), &game.events);
    }
    EXIT_OK
}

pub fn replay(args: ReplayArgs) -> u8 {
    let text = match std::fs::read_to_string(&args.log) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", args.log.display());
            return EXIT_USAGE;
        }
    };
    let (header, events) = match log::parse(&text) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {}: {e}", args.log.display());
            return EXIT_FINDINGS;
        }
    };
    let ruleset = args
        .ruleset
        .clone()
        .unwrap_or_else(|| PathBuf::from(&header.ruleset_path));
    let files: Vec<PathBuf> = header.assumptions.iter().map(PathBuf::from).collect();
    let assumes: Vec<String> = header
        .assume
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let loaded = match load(&ruleset, &header.scenario, &assumes, &files, false) {
        Ok(l) => l,
        Err(c) => return c,
    };
    if loaded.hash != header.ruleset_hash {
        eprintln!(
            "error: {}: the rules or assumptions at {} are not the ones this game was played with (fingerprint {} in the log, {} now)",
            args.log.display(),
            ruleset.display(),
            header.ruleset_hash,
            loaded.hash
        );
        return EXIT_FINDINGS;
    }
    let rules = match rules(&loaded, &header.scenario) {
        Ok(r) => r,
        Err(c) => return c,
    };
    let backend = if header.backend == BackendKind::Interp.name() {
        BackendKind::Interp
    } else {
        BackendKind::Jit
    };
    let jit = jit_for(&loaded, backend);
    // Each side's decisions, in order, played back by a scripted policy.
    let mut policies = match Scripted::from_events(&loaded.program, &events) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {}: {e}", args.log.display());
            return EXIT_FINDINGS;
        }
    };
    let mut game = Game::new(&rules, header.seed, jit.as_ref());
    let result = match game.play(&mut policies) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {}: {e}", args.log.display());
            return EXIT_FINDINGS;
        }
    };
    if let Some(i) =
        (0..events.len().max(game.events.len())).find(|&i| events.get(i) != game.events.get(i))
    {
        let show = |e: Option<&Event>| e.map_or("nothing".into(), log::narrate);
        eprintln!(
            "error: {}: event {} differs: the log has `{}`, the rules give `{}`",
            args.log.display(),
            i + 1,
            show(events.get(i)).trim(),
            show(game.events.get(i)).trim()
        );
        return EXIT_FINDINGS;
    }
    if args.json {
        report::print_json(&result_json(&header, &rules, &result));
    } else {
        print_story(&preamble(&header, &rules), &game.events);
    }
    EXIT_OK
}

#[derive(Serialize)]
struct SideJson {
    side: String,
    policy: String,
    wins: u64,
    win_rate: f64,
    ci95_low: f64,
    ci95_high: f64,
    mean_losses: f64,
}

#[derive(Serialize)]
struct SimJson {
    ruleset: String,
    scenario: String,
    games: u64,
    seed: u64,
    jobs: usize,
    backend: String,
    sides: Vec<SideJson>,
    draws: u64,
    draw_rate: f64,
    mean_turns: f64,
    mean_decisions: f64,
    seconds: f64,
    playouts_per_second: f64,
    assumptions: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reference: Option<ReferenceJson>,
}

#[derive(Serialize)]
struct ReferenceJson {
    name: String,
    seconds: f64,
    playouts_per_second: f64,
    /// Engine playouts/s over the reference's.
    ratio: f64,
    /// The reference's totals equal the engine's (the same games were played).
    same_totals: bool,
}

pub fn sim(args: SimArgs) -> u8 {
    let a = &args.game;
    if args.n == 0 || args.n > MAX_GAMES {
        eprintln!("error: -n must be 1 to {MAX_GAMES}, not {}", args.n);
        return EXIT_USAGE;
    }
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if jobs == 0 || jobs > 1024 {
        eprintln!("error: --jobs must be 1 to 1024, not {jobs}");
        return EXIT_USAGE;
    }
    let (loaded, kinds) = match load_game(a) {
        Ok(x) => x,
        Err(c) => return c,
    };
    let rules = match rules(&loaded, &a.scenario) {
        Ok(r) => r,
        Err(c) => return c,
    };
    let backend = a.backend.kind();
    let progress = report::Progress::at_least(args.n, "games", 200);
    let t0 = Instant::now();
    let totals = match sim::simulate(&rules, args.n, args.seed, jobs, backend, &kinds, &|k| {
        progress.inc(k)
    }) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_FINDINGS;
        }
    };
    drop(progress);
    let secs = t0.elapsed().as_secs_f64();
    let mut out = summary(&args, &loaded, &rules, &kinds, jobs, backend, &totals, secs);
    if let Some(ReferenceArg::PlatoonFlank) = args.reference {
        if rules.scenario != "protecting_the_flank" || kinds.iter().any(|k| k != "random") {
            eprintln!(
                "error: --reference platoon-flank plays Platoon's protecting-the-flank with random policies only"
            );
            return EXIT_USAGE;
        }
        let flank = match sandtable_runtime::engine::reference::Flank::new(&rules) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("error: the reference cannot read these rules: {e}");
                return EXIT_FINDINGS;
            }
        };
        let t1 = Instant::now();
        let rt = match sim::simulate_reference(
            &flank,
            loaded.program.sides.len(),
            args.n,
            args.seed,
            jobs,
        ) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_FINDINGS;
            }
        };
        let rs = t1.elapsed().as_secs_f64();
        let rps = if rs > 0.0 { args.n as f64 / rs } else { 0.0 };
        out.reference = Some(ReferenceJson {
            name: "platoon-flank".into(),
            seconds: rs,
            playouts_per_second: rps,
            ratio: if rps > 0.0 {
                out.playouts_per_second / rps
            } else {
                0.0
            },
            same_totals: rt == totals,
        });
    }
    if args.json {
        report::print_json(&out);
    } else {
        print_summary(&out);
    }
    EXIT_OK
}

#[allow(clippy::too_many_arguments)]
fn summary(
    args: &SimArgs,
    loaded: &Loaded,
    rules: &Rules,
    kinds: &[String],
    jobs: usize,
    backend: BackendKind,
    t: &Totals,
    secs: f64,
) -> SimJson {
    let n = t.games as f64;
    SimJson {
        ruleset: loaded.program.name.clone(),
        scenario: rules.scenario.clone(),
        games: t.games,
        seed: args.seed,
        jobs,
        backend: backend.name().into(),
        sides: rules
            .sides()
            .iter()
            .map(|&s| {
                let w = t.wins[s as usize];
                let (lo, hi) = sim::wilson(w, t.games);
                SideJson {
                    side: rules.side_name(s).to_string(),
                    policy: kinds[s as usize].clone(),
                    wins: w,
                    win_rate: w as f64 / n,
                    ci95_low: lo,
                    ci95_high: hi,
                    mean_losses: t.losses[s as usize] as f64 / n,
                }
            })
            .collect(),
        draws: t.draws,
        draw_rate: t.draws as f64 / n,
        mean_turns: t.turns as f64 / n,
        mean_decisions: t.decisions as f64 / n,
        seconds: secs,
        playouts_per_second: if secs > 0.0 { n / secs } else { 0.0 },
        assumptions: loaded.files.clone(),
        reference: None,
    }
}

fn print_summary(s: &SimJson) {
    println!(
        "{}: {}: {} games from seed {} on {} thread(s), {} backend",
        s.ruleset, s.scenario, s.games, s.seed, s.jobs, s.backend
    );
    if !s.assumptions.is_empty() {
        println!(
            "assumptions (not from the book): {}",
            s.assumptions.join(", ")
        );
    }
    println!(
        "{:<12} {:<8} {:>8} {:>8}  {:<17} {:>11}",
        "side", "policy", "wins", "rate", "95% interval", "mean losses"
    );
    for x in &s.sides {
        println!(
            "{:<12} {:<8} {:>8} {:>7.1}%  {:>6.1}% - {:>5.1}%  {:>11.2}",
            x.side,
            x.policy,
            x.wins,
            100.0 * x.win_rate,
            100.0 * x.ci95_low,
            100.0 * x.ci95_high,
            x.mean_losses
        );
    }
    println!(
        "{:<12} {:<8} {:>8} {:>7.1}%",
        "draws",
        "",
        s.draws,
        100.0 * s.draw_rate
    );
    println!(
        "mean turns {:.2}, mean decisions {:.1}; {:.2} s, {:.0} playouts/s",
        s.mean_turns, s.mean_decisions, s.seconds, s.playouts_per_second
    );
    if let Some(r) = &s.reference {
        println!(
            "reference {}: {:.2} s, {:.0} playouts/s; engine/reference = {:.3}x; same totals: {}",
            r.name,
            r.seconds,
            r.playouts_per_second,
            r.ratio,
            if r.same_totals { "yes" } else { "NO" }
        );
    }
}
