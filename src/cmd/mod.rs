//! One module per subcommand.

pub mod against;
pub mod audit;
pub mod bench;
pub mod bench_suite;
pub mod check;
pub mod explain;
pub mod game;
pub mod ir;
pub mod matchups;
pub mod prob;
pub mod scenarios;
