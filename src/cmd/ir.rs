//! `sandtable ir`: the checked IR as JSON, the contract between compiler and runtime.

use std::path::PathBuf;

use crate::report::{self, EXIT_OK};

#[derive(clap::Args)]
#[command(after_help = "Example:\n  sandtable ir rules/platoon > platoon.ir.json")]
pub struct Args {
    /// Ruleset folder or .sand file
    ruleset: PathBuf,
    /// One line instead of indented JSON
    #[arg(long)]
    compact: bool,
}

pub fn run(args: Args) -> u8 {
    let compiled = match report::load_ruleset(&args.ruleset) {
        Ok(c) => c,
        Err(code) => return code,
    };
    if args.compact {
        println!(
            "{}",
            serde_json::to_string(&compiled.program).unwrap_or_default()
        );
    } else {
        report::print_json(&compiled.program);
    }
    EXIT_OK
}
