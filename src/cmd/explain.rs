//! `sandtable explain`: one sampled resolution, step by step, with rule citations.

use std::path::PathBuf;

use sandtable_runtime::{explain, query};

use crate::report::{self, EXIT_FINDINGS, EXIT_OK};

#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  sandtable explain rules/platoon fire --set fire_modifier=4 --set target_modifier=0 --seed 3\n  \
sandtable explain rules/dinky_dau shooting --set dice=6 --set cover=no_cover --set firer_pinned=false --set point_blank=true --set save_cover=open_ground --seed 1 --json"
)]
pub struct Args {
    /// Ruleset folder or .sand file
    ruleset: PathBuf,
    /// Name of the resolution
    resolution: String,
    /// Set a parameter: NAME=VALUE (repeatable)
    #[arg(long = "set", value_name = "NAME=VALUE")]
    sets: Vec<String>,
    /// Supply a value for one of the book's unknowns: NAME=VALUE (repeatable)
    #[arg(long = "assume", value_name = "NAME=VALUE")]
    assumes: Vec<String>,
    /// Assumptions file (repeatable)
    #[arg(long = "assumptions", value_name = "FILE")]
    assumption_files: Vec<PathBuf>,
    /// Seed of the dice
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print the steps as JSON
    #[arg(long)]
    json: bool,
    /// The story is always told by the interpreter (the JIT keeps no trace); with `jit` the
    /// same seed is also run compiled and the two results are checked to agree
    #[arg(long, value_enum, default_value_t = crate::report::BackendArg::Interp)]
    backend: crate::report::BackendArg,
}

pub fn run(args: Args) -> u8 {
    let compiled = match report::load_ruleset(&args.ruleset) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let program = &compiled.program;
    let result = (|| -> Result<_, String> {
        let proc = query::find_proc(program, &args.resolution)?;
        let sets = report::pairs(&args.sets, "--set").map_err(|_| String::from("bad --set"))?;
        let assumes =
            report::pairs(&args.assumes, "--assume").map_err(|_| String::from("bad --assume"))?;
        let call_args = query::bind_args(program, proc, &sets)?;
        let files: Vec<&std::path::Path> =
            args.assumption_files.iter().map(PathBuf::as_path).collect();
        let assumptions = query::assumptions(program, &assumes, &files)?;
        let inputs: Vec<String> = program.procs[proc as usize]
            .params
            .iter()
            .zip(&call_args)
            .map(|(p, v)| format!("{} = {}", p.name, v.show(program)))
            .collect();
        let ex = explain::run(program, &assumptions, proc, call_args, args.seed)
            .map_err(|e| e.to_string())?;
        Ok((proc, inputs, ex))
    })();
    let (proc, inputs, ex) = match result {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_FINDINGS;
        }
    };
    let p = &program.procs[proc as usize];
    if args.json {
        report::print_json(&serde_json::json!({
            "resolution": p.name,
            "seed": args.seed,
            "inputs": inputs,
            "steps": ex.events,
            "narrative": explain::render(program, &ex),
            "outcome": ex.outcome.key.show(program),
            "effects": ex.outcome.effects.iter().map(|e| e.show(program)).collect::<Vec<_>>(),
            "draws": ex.draws,
        }));
        return EXIT_OK;
    }
    println!(
        "{} — {}{}, seed {}",
        program.name,
        p.name,
        explain::cite(program, &p.cite),
        args.seed
    );
    if !inputs.is_empty() {
        println!("  {}", inputs.join(", "));
    }
    for line in explain::render(program, &ex) {
        println!("  {line}");
    }
    println!(
        "result: {} ({} dice rolled)",
        ex.outcome.key.show(program),
        ex.draws
    );
    EXIT_OK
}
