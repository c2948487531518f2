//! `sandtable-reference`: hand-written Rust versions of procedures and two scenarios of the
//! encoded systems, the speed references the interpreter, the JIT and the engine are measured
//! against (`sandtable bench --reference`, `sandtable sim --reference`). They draw from the
//! same dice streams in the same order as the rules, so a benchmark also checks they agree.
//!
//! This is the only crate that spells out a particular game's mechanics; the runtime names no
//! game. Nothing but the benchmarks and their tests uses it.

pub mod fire;
pub mod flank;
pub mod total_destruction;

pub use fire::{Shooting, dinky_dau_shooting, platoon_fire};
pub use flank::Flank;
pub use total_destruction::TotalDestruction;

/// Names of the references `sim --reference` knows.
pub const REFERENCES: &[&str] = &["platoon-flank", "plastic-total-destruction"];
