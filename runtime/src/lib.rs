//! `sandtable-runtime`: runs the IR. The interpreter ([`interp`]) is the reference semantics;
//! [`exact`] computes exact outcome distributions (on the array kernels of [`dense`] where it
//! can); [`montecarlo`] estimates them by sampling; [`query`] turns the inputs the compiler
//! typed (parameters, assumptions) into run-time values.
//!
//! The runtime knows no game by name: everything it does is driven by the IR.

pub mod board;
pub mod dense;
pub mod dist;
pub mod engine;
pub mod error;
pub mod exact;
pub mod explain;
pub mod hash;
pub mod interp;
pub mod jit;
pub mod limbs;
pub mod montecarlo;
pub mod outcomes;
pub mod query;
pub mod rng;
pub mod value;

pub use error::RunError;
pub use value::{OutcomeKey, Val};
