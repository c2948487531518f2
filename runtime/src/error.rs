//! Errors of running rules. Each says what went wrong in the rules' terms and how to go on.

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    #[error("`{name}` is unknown (`?`) in the rules ({file}:{line}){}; supply a value with `--assume {name}=VALUE` or an assumptions file", note.as_ref().map(|n| format!(": {n}")).unwrap_or_default())]
    NeedsAssumption {
        name: String,
        note: Option<String>,
        file: String,
        line: u32,
    },
    #[error(
        "`{0}` is a function of the game engine: it needs a game in progress and cannot be evaluated on its own"
    )]
    NeedsGame(String),
    #[error("a choice point (`choose`) needs a decision: run it in a game with a policy")]
    NeedsDecision,
    #[error("the requirement of `{0}` does not hold")]
    Illegal(String),
    #[error("no band of `{proc}` covers the value {value}")]
    NoBand { value: String, proc: String },
    #[error("table `{table}` has no row for {key}")]
    NoRow { table: String, key: String },
    #[error("{0}")]
    Type(String),
    #[error("division by zero")]
    DivZero,
    #[error("arithmetic overflow")]
    Overflow,
    #[error("{what} is {size}; the limit is {limit}")]
    Limit { what: String, size: u64, limit: u64 },
    #[error(
        "exact enumeration would need about {estimate} steps (limit {limit}); use `--samples N` for a Monte Carlo estimate with a 95% interval"
    )]
    TooLarge { estimate: String, limit: u64 },
    /// Internal: a fast weight overflowed; the exact evaluator retries with big integers.
    #[error("a probability weight overflowed its fast representation")]
    WeightOverflow,
}

impl From<crate::dist::Overflow> for RunError {
    fn from(_: crate::dist::Overflow) -> Self {
        RunError::WeightOverflow
    }
}
