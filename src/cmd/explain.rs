//! `sandtable explain`: one sampled resolution, step by step, with rule citations.

use sandtable_runtime::explain;

use crate::report::{self, EXIT_FINDINGS, EXIT_OK};

#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  sandtable explain rules/platoon fire --set fire_modifier=4 --set target_modifier=0 --seed 3\n  \
sandtable explain rules/dinky_dau shooting --set dice=6 --set cover=no_cover --set firer_pinned=false --set point_blank=true --set save_cover=open_ground --seed 1 --json"
)]
pub struct Args {
    #[command(flatten)]
    query: crate::report::QueryArgs,
    /// Seed of the dice
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print the steps as JSON
    #[arg(long)]
    pub json: bool,
    /// The story is always told by the interpreter (the JIT keeps no trace); with `jit` the
    /// same seed is also run compiled and the two results are checked to agree
    #[arg(long, value_enum, default_value_t = crate::report::BackendArg::Interp)]
    backend: crate::report::BackendArg,
}

pub fn run(args: Args) -> u8 {
    let prepared = match report::prepare(&args.query) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let program = &prepared.compiled.program;
    let proc = prepared.proc;
    let inputs: Vec<String> = prepared
        .inputs()
        .into_iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect();
    let ex = match explain::run(
        program,
        &prepared.assumptions,
        proc,
        prepared.args.clone(),
        args.seed,
    ) {
        Ok(ex) => ex,
        Err(e) => {
            report::error(report::Kind::Run, e);
            return EXIT_FINDINGS;
        }
    };
    if args.backend == report::BackendArg::Jit {
        let backend = report::backend(program, &prepared.assumptions, args.backend);
        let mut dice = sandtable_runtime::rng::Dice::new(args.seed);
        let mut host = sandtable_runtime::interp::NoGame;
        match backend.run(proc, &prepared.args, &mut dice, &mut host) {
            Ok(o) if o.key == ex.outcome.key && dice.draws() == ex.draws => {}
            Ok(o) => {
                report::error(
                    report::Kind::Internal,
                    format!(
                        "the JIT disagrees with the interpreter on this seed: {} with {} dice against {} with {}",
                        o.key.show_of(program, proc),
                        dice.draws(),
                        ex.outcome.key.show_of(program, proc),
                        ex.draws
                    ),
                );
                return EXIT_FINDINGS;
            }
            Err(e) => {
                report::error(report::Kind::Run, e);
                return EXIT_FINDINGS;
            }
        }
    }
    let p = &program.procs[proc as usize];
    if args.json {
        report::print_json(&serde_json::json!({
            "resolution": p.name,
            "seed": args.seed,
            "inputs": inputs,
            "steps": ex.events,
            "narrative": explain::render(program, &ex),
            "outcome": ex.outcome.key.show_of(program, proc),
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
        ex.outcome.key.show_of(program, proc),
        ex.draws
    );
    EXIT_OK
}
