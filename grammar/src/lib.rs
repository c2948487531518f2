//! `sandtable-grammar`: the `.sand` pest grammar and its owned, span-carrying syntax tree.
//!
//! Invariant: parsing never panics and never gives up on a whole file because of one error:
//! [`parse`] returns every item it could read plus one [`ParseError`] per unreadable region.
//! No semantics live here: names are not resolved and nothing is type-checked.

pub mod ast;
mod build;
pub mod codes;
mod parser;

pub use codes::{Code, Severity};
pub use parser::{
    MAX_NESTING, MAX_PARSE_ERRORS, MAX_SOURCE_BYTES, ParseError, Parsed, SYNTAX, parse,
};
