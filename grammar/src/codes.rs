//! The table of diagnostic codes: one variant per code, with the code string users see (and key
//! on: `--allow`, `--deny`, JSON consumers), its default severity and a one-line doc.
//!
//! It lives in the grammar, the lowest crate, because the parser emits codes too; the compiler
//! re-exports it as `sandtable_compiler::diagnostic::Code`. The list in `docs/language.md` is
//! generated from this table ([`Code::markdown_list`]); a compiler test fails when it is stale.

use serde::Serialize;

/// How serious a diagnostic is. Errors stop `run` and make `check` exit 1; warnings are the
/// translators' lints; advice is for vague findings (the rulebook audit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Advice,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Advice => "advice",
        }
    }
}

/// Declares [`Code`] and its accessors from one row per code:
/// `/// doc line` then `Variant = "sand::family::name", Severity;`.
macro_rules! codes {
    ($( #[doc = $doc:literal] $variant:ident = $code:literal, $severity:ident; )+) => {
        /// A diagnostic code of the `.sand` toolchain.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code {
            $( #[doc = $doc] $variant, )+
        }

        impl Code {
            /// Every code, in table order.
            pub const ALL: &'static [Code] = &[$(Code::$variant),+];

            /// The stable code string, e.g. `sand::resolve::unknown-name`.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $code,)+
                }
            }

            /// The severity a diagnostic with this code has unless `--allow`/`--deny` say
            /// otherwise.
            pub const fn severity(self) -> Severity {
                match self {
                    $(Code::$variant => Severity::$severity,)+
                }
            }

            /// What the code means, in one line.
            pub const fn doc(self) -> &'static str {
                match self {
                    $(Code::$variant => $doc.trim_ascii(),)+
                }
            }
        }
    };
}

codes! {
    /// The text does not follow the grammar here; parsing resumes at the next item.
    ParseSyntax = "sand::parse::syntax", Error;
    /// A source text is longer than the parser accepts (8 MiB; the loader refuses such a file first).
    ParseTooLarge = "sand::parse::too-large", Error;
    /// More syntax errors than are listed for one file; this one counts the rest.
    ParseTooManyErrors = "sand::parse::too-many-errors", Error;
    /// Brackets, braces or parentheses nest deeper than the limit.
    ParseTooDeep = "sand::parse::too-deep", Error;
    /// One expression has more operands and operators than the limit.
    ParseTooLong = "sand::parse::too-long", Error;
    /// A closing `}` that closes nothing, or a `{` left open when the next item begins.
    ParseUnmatchedBrace = "sand::parse::unmatched-brace", Error;
    /// A `/*` comment that is never closed.
    ParseUnterminatedComment = "sand::parse::unterminated-comment", Error;
    /// An integer literal that does not fit in 64 bits.
    ParseNumberTooLarge = "sand::parse::number-too-large", Error;
    /// A name that no definition, import or standard module provides.
    ResolveUnknownName = "sand::resolve::unknown-name", Error;
    /// A field that the kind does not declare.
    ResolveUnknownField = "sand::resolve::unknown-field", Error;
    /// An entity that does not give a field its kind requires.
    ResolveMissingField = "sand::resolve::missing-field", Error;
    /// A type name that names no type (or a table key over something that is not a type).
    ResolveUnknownType = "sand::resolve::unknown-type", Error;
    /// A name defined twice in one scope: items, enum members or the fields of a kind.
    ResolveDuplicateDefinition = "sand::resolve::duplicate-definition", Error;
    /// A bare name that is a member of several enums, with nothing to say which.
    ResolveAmbiguousName = "sand::resolve::ambiguous-name", Error;
    /// An import whose file or standard module does not exist.
    ResolveImportNotFound = "sand::resolve::import-not-found", Error;
    /// An import that leaves the ruleset's folder (allowed only with `--allow-outside-imports`).
    ResolveImportOutside = "sand::resolve::import-outside", Error;
    /// An `assume` line in a ruleset file rather than in an assumptions file.
    ResolveAssumeOutsideAssumptions = "sand::resolve::assume-outside-assumptions", Error;
    /// A local name that hides the enum member its context expects.
    ResolveShadowedMember = "sand::resolve::shadowed-member", Error;
    /// A value of the wrong type for its place: an operand, argument, field or band.
    TypeMismatch = "sand::type::mismatch", Error;
    /// A call with the wrong number of arguments, or a named argument the callee does not have.
    TypeArity = "sand::type::arity", Error;
    /// A die with no faces, or more faces than the limit.
    TypeBadDie = "sand::type::bad-die", Error;
    /// A table row key that is not a number, a range, a name, `?` or `_`.
    TypeBadPattern = "sand::type::bad-pattern", Error;
    /// A range whose upper bound is below its lower bound.
    TypeInvertedRange = "sand::type::inverted-range", Error;
    /// A field access on a value whose type has no fields.
    TypeNoFields = "sand::type::no-fields", Error;
    /// A dice operation given something that is not a die.
    TypeNotADie = "sand::type::not-a-die", Error;
    /// Indexing something that is not a table.
    TypeNotATable = "sand::type::not-a-table", Error;
    /// A name in a type's place that names something else.
    TypeNotAType = "sand::type::not-a-type", Error;
    /// A name in a value's place that names something else (a kind, a table, a procedure).
    TypeNotAValue = "sand::type::not-a-value", Error;
    /// A call of a name that is neither a procedure nor an engine function.
    TypeNotCallable = "sand::type::not-callable", Error;
    /// A computed value where only a literal may stand (stat lines, table cells, defaults).
    TypeNotConstant = "sand::type::not-constant", Error;
    /// A procedure that calls itself, directly or through others.
    TypeRecursion = "sand::type::recursion", Error;
    /// A `repeat` whose count may exceed the limit.
    TypeUnboundedRepeat = "sand::type::unbounded-repeat", Error;
    /// A row label given twice in one table.
    TableDuplicateKey = "sand::table::duplicate-key", Error;
    /// A table with two keys but no `columns` line.
    TableMissingColumns = "sand::table::missing-columns", Error;
    /// A name in a column of numbers (a look-up has one type per column).
    TableMixedCells = "sand::table::mixed-cells", Error;
    /// A row with more or fewer cells than the table has columns.
    TableRowWidth = "sand::table::row-width", Error;
    /// A config block, or a block nested in one, that does not exist.
    ConfigUnknownBlock = "sand::config::unknown-block", Error;
    /// A property that the config block does not have.
    ConfigUnknownProperty = "sand::config::unknown-property", Error;
    /// A `: scheme` that the block does not know or does not take.
    ConfigUnknownScheme = "sand::config::unknown-scheme", Error;
    /// An `on EVENT` hook for an event its block never runs (a scenario's `on strat`), which would be ignored silently.
    ConfigUnknownEvent = "sand::config::unknown-event", Error;
    /// A second `ruleset` block in one ruleset.
    ConfigDuplicateRuleset = "sand::config::duplicate-ruleset", Error;
    /// A list of sides (`first:`, `order:`) that is empty or names a side twice.
    ConfigBadOrder = "sand::config::bad-order", Error;
    /// An activation's `activates:` that is not `piece`, `place`, `group` or `side`.
    ActivationUnknownUnit = "sand::activation::unknown-unit", Error;
    /// An activation condition (`all_act_when:`, `commands:`) that is not true or false.
    ActivationNotCondition = "sand::activation::not-a-condition", Error;
    /// A `together:` or phase `actions:` entry that names no action.
    ActivationNotAction = "sand::activation::not-an-action", Error;
    /// An activation property the unit it activates never reads (`commands:` without `activates: group`).
    ActivationIgnored = "sand::activation::ignored", Error;
    /// A `policy … for SIDE` whose side does not exist.
    PolicyUnknownSide = "sand::policy::unknown-side", Error;
    /// A `prefer` that names something other than an action (or binds the wrong number of its arguments).
    PolicyNotAction = "sand::policy::not-an-action", Error;
    /// A policy named like a policy the engine has (`random`, `greedy`, `human`, …), or two policies of one name.
    PolicyBadName = "sand::policy::bad-name", Error;
    /// A pool count or die face beyond what the runtime computes with.
    LimitTooLarge = "sand::limit::too-large", Error;
    /// An activation or board property (or block) that the chosen scheme never reads.
    ScenarioWrongScheme = "sand::scenario::wrong-scheme", Error;
    /// A scenario played on a board of a scheme the engine does not play (`square`).
    ScenarioUnplayableBoard = "sand::scenario::unplayable-board", Error;
    /// A board the engine cannot build: a hex grid or a table beyond its limits, or sectors and zones that do not tile the table.
    ScenarioBoardSize = "sand::scenario::board-size", Error;
    /// A hex label or deployment rows or columns outside the board played.
    ScenarioOffBoard = "sand::scenario::off-board", Error;
    /// A force whose units do not fit in its deployment area: hexes at `max_per_hex` shared with the forces before it, or a table area's points a base apart.
    ScenarioAreaTooSmall = "sand::scenario::area-too-small", Error;
    /// A `deploy:` that names no area of the table, or is not rows and columns on a hex board.
    ScenarioUnknownArea = "sand::scenario::unknown-area", Error;
    /// A board terrain that is neither a `terrain` entity nor (on a hex board) an enum member.
    ScenarioUnknownTerrain = "sand::scenario::unknown-terrain", Error;
    /// A force or chip count for a side that does not exist, or a second force of one side.
    ScenarioUnknownSide = "sand::scenario::unknown-side", Error;
    /// A phase's `activation:` that names no activation block.
    ScenarioUnknownActivation = "sand::scenario::unknown-activation", Error;
    /// A board, activation, force or scenario without a property the engine needs to set it up.
    ScenarioMissingProperty = "sand::scenario::missing-property", Error;
    /// A set-up value the engine cannot use: turns out of range, a size without a unit, a chip count, a neutral piece of a side.
    ScenarioBadValue = "sand::scenario::bad-value", Error;
    /// The turn block's `limit:` when every scenario sets its own `turns:`.
    LintIgnoredLimit = "sand::lint::ignored-limit", Warning;
    /// A definition that nothing uses.
    LintUnused = "sand::lint::unused", Warning;
    /// An expression statement whose value is thrown away.
    LintUnusedValue = "sand::lint::unused-value", Warning;
    /// The book's section numbering skips a number.
    LintNumberingGap = "sand::lint::numbering-gap", Warning;
    /// A section number that comes after a higher one.
    LintNumberingOrder = "sand::lint::numbering-order", Warning;
    /// A section number used twice.
    LintDuplicateNumber = "sand::lint::duplicate-number", Warning;
    /// A cited rule number that no section carries.
    LintDanglingReference = "sand::lint::dangling-reference", Warning;
    /// A cited rule number that several sections carry.
    LintAmbiguousReference = "sand::lint::ambiguous-reference", Warning;
    /// A value left unknown (`?`); running what needs it asks for an assumption.
    LintUnknownValue = "sand::lint::unknown-value", Warning;
    /// A table all of whose cells are unknown.
    LintEmptyTable = "sand::lint::empty-table", Warning;
    /// A table some of whose cells are unknown.
    LintPartlyEmptyTable = "sand::lint::partly-empty-table", Warning;
    /// Result bands that leave some values uncovered.
    LintBandGap = "sand::lint::band-gap", Warning;
    /// Result bands that cover a value twice.
    LintBandOverlap = "sand::lint::band-overlap", Warning;
    /// A band, or a row of a rolled table, that the value can never reach.
    LintUnreachableBand = "sand::lint::unreachable-band", Warning;
    /// A roll or `successes` target that always succeeds.
    LintCertainTarget = "sand::lint::certain-target", Warning;
    /// A roll or `successes` target that can never succeed.
    LintUnreachableTarget = "sand::lint::unreachable-target", Warning;
    /// A modifier stack that, at its lowest or highest total, decides the roll whatever the die.
    LintStackOutsideDie = "sand::lint::stack-outside-die", Warning;
    /// A die face that no row of a rolled table covers.
    LintTableUncoveredFace = "sand::lint::table-uncovered-face", Warning;
    /// A modifier that never applies, or adds 0.
    LintDeadModifier = "sand::lint::dead-modifier", Warning;
    /// The same modifier twice in a stack, or two modifiers under one condition.
    LintDuplicateModifier = "sand::lint::duplicate-modifier", Warning;
    /// A requirement that never holds, so its action can never be taken.
    LintNeverHolds = "sand::lint::never-holds", Warning;
    /// A resolution that gives the same outcome whatever its inputs.
    LintSameOutcome = "sand::lint::same-outcome", Warning;
    /// A table with `-` cells that the procedure using it never tests for.
    LintUncheckedNotApplicable = "sand::lint::unchecked-not-applicable", Warning;
    /// An action pits one unit kind against another in a resolution where an outcome can never happen (`sandtable matchups`).
    LintImpossibleMatchup = "sand::lint::impossible-matchup", Warning;
}

impl Code {
    /// The code whose string is `name`.
    pub fn from_name(name: &str) -> Option<Code> {
        Code::ALL.iter().copied().find(|c| c.as_str() == name)
    }

    /// The generated list of codes for `docs/language.md`: errors, then warnings, one line each.
    pub fn markdown_list() -> String {
        let mut out = String::new();
        for (severity, title) in [
            (
                Severity::Error,
                "Errors (exit 1; `--allow` cannot silence them):",
            ),
            (
                Severity::Warning,
                "Warnings (lints for translators; `--deny CODE` makes one an error, `--allow CODE` silences it):",
            ),
        ] {
            out.push_str(title);
            out.push_str("\n\n");
            let mut codes: Vec<Code> = Code::ALL
                .iter()
                .copied()
                .filter(|c| c.severity() == severity)
                .collect();
            codes.sort_by_key(|c| c.as_str());
            for c in codes {
                out.push_str(&format!("- `{}`: {}\n", c.as_str(), c.doc()));
            }
            out.push('\n');
        }
        out.pop();
        out
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_strings_are_unique_and_well_formed() {
        let mut seen = std::collections::BTreeSet::new();
        for c in Code::ALL {
            let s = c.as_str();
            assert!(seen.insert(s), "{s} is in the table twice");
            let parts: Vec<&str> = s.split("::").collect();
            assert!(
                parts.len() == 3
                    && parts[0] == "sand"
                    && parts[1..].iter().all(|p| !p.is_empty()
                        && p.chars().all(|ch| ch.is_ascii_lowercase() || ch == '-')),
                "{s} is not sand::family::name"
            );
            // Lints are warnings and everything else is an error: the family says which.
            assert_eq!(
                parts[1] == "lint",
                c.severity() == Severity::Warning,
                "{s}: {:?}",
                c.severity()
            );
            assert!(!c.doc().is_empty() && !c.doc().contains('\n'), "{s}");
            assert_eq!(Code::from_name(s), Some(*c));
        }
        assert_eq!(Code::from_name("sand::lint::nope"), None);
    }
}
