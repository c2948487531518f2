//! Errors of running rules. Each says what went wrong in the rules' terms and how to go on.

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunError {
    #[error("`{}` is unknown (`?`) in the rules ({}:{}){}; supply a value with `--assume {}=VALUE` or an assumptions file", .0.name, .0.file, .0.line, .0.note.as_ref().map(|n| format!(": {n}")).unwrap_or_default(), .0.name)]
    NeedsAssumption(Box<Unsupplied>),
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
    /// An error of a rule, with where the rule is written.
    #[error("{} (in `{}` at {}:{})", .0.error, .0.proc, .0.file, .0.line)]
    At(Box<Placed>),
    /// Internal: a fast weight overflowed; the exact evaluator retries with big integers.
    #[error("a probability weight overflowed its fast representation")]
    WeightOverflow,
}

impl RunError {
    /// This error, placed at statement `stmt` of procedure `proc` (its line when `stmt` is
    /// not given), unless it already names a place or is not about a rule's text.
    pub fn at(
        self,
        program: &sandtable_ir::Program,
        proc: u32,
        stmt: Option<&sandtable_ir::Stmt>,
    ) -> RunError {
        self.at_addr(
            program,
            proc,
            stmt.map_or(0, |s| std::ptr::from_ref(s).addr()),
        )
    }

    /// [`RunError::at`] with the statement given by its address (0: none), for evaluators
    /// that remember the statement they run but cannot hold a reference to it.
    pub fn at_addr(self, program: &sandtable_ir::Program, proc: u32, stmt: usize) -> RunError {
        let placeable = matches!(
            self,
            RunError::Type(_)
                | RunError::NoBand { .. }
                | RunError::NoRow { .. }
                | RunError::DivZero
                | RunError::Overflow
        );
        match program.procs.get(proc as usize) {
            Some(p) if placeable && !p.file.is_empty() => RunError::At(Box::new(Placed {
                error: self,
                proc: p.name.clone(),
                file: p.file.clone(),
                line: p.line_of(stmt),
            })),
            _ => self,
        }
    }
}

// The two largest errors are boxed: every evaluation step returns a `Result`, whose size is
// that of its largest error.

/// An unknown (`?`) of the rules that no assumption supplied.
#[derive(Debug, Clone, PartialEq)]
pub struct Unsupplied {
    pub name: String,
    pub note: Option<String>,
    pub file: String,
    pub line: u32,
}

/// An error of a rule and where the rule is written.
#[derive(Debug, Clone, PartialEq)]
pub struct Placed {
    pub error: RunError,
    pub proc: String,
    pub file: String,
    pub line: u32,
}

impl From<crate::dist::Overflow> for RunError {
    fn from(_: crate::dist::Overflow) -> Self {
        RunError::WeightOverflow
    }
}
