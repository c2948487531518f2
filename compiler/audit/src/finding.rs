//! The report types shared by every check.

use serde::Serialize;
use std::ops::Range;

/// How much an editor should care. Warnings are defects in the text as printed;
/// advice is a hint that needs a human eye because the tool cannot be sure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Severity {
    Warning,
    Advice,
}

/// One problem found in a rulebook, anchored to the exact bytes it concerns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    pub span: Range<usize>,
    pub label: String,
    pub help: Option<String>,
}

impl Finding {
    pub(crate) fn warning(
        code: &'static str,
        span: Range<usize>,
        message: impl Into<String>,
        label: impl Into<String>,
    ) -> Self {
        Finding {
            code,
            severity: Severity::Warning,
            message: message.into(),
            span,
            label: label.into(),
            help: None,
        }
    }

    pub(crate) fn advice(
        code: &'static str,
        span: Range<usize>,
        message: impl Into<String>,
        label: impl Into<String>,
    ) -> Self {
        Finding {
            severity: Severity::Advice,
            ..Finding::warning(code, span, message, label)
        }
    }

    pub(crate) fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

/// Stable finding codes; the CLI and JSON consumers key on these strings.
pub mod codes {
    pub const NUMBERING_GAP: &str = "audit::numbering-gap";
    pub const NUMBERING_DUPLICATE: &str = "audit::numbering-duplicate";
    pub const NUMBERING_ORDER: &str = "audit::numbering-order";
    pub const TOC_MISSING_IN_BODY: &str = "audit::toc-entry-missing-in-body";
    pub const TOC_MISSING_IN_CONTENTS: &str = "audit::heading-missing-in-toc";
    pub const TOC_NUMBER_MISMATCH: &str = "audit::toc-numbering-mismatch";
    pub const REPEATED_HEADING: &str = "audit::repeated-heading";
    pub const DANGLING_REFERENCE: &str = "audit::dangling-reference";
    pub const AMBIGUOUS_REFERENCE: &str = "audit::ambiguous-reference";
    pub const VAGUE_REFERENCE: &str = "audit::unresolved-vague-reference";
    pub const EMPTY_LEAD_IN: &str = "audit::lead-in-followed-by-nothing";
    pub const EMPTY_TABLE_CELLS: &str = "audit::empty-table-cells";
    pub const SHORT_TABLE_ROW: &str = "audit::short-table-row";
    pub const ILLEGIBLE_MARK: &str = "audit::illegible-text";
    pub const OMISSION_MARK: &str = "audit::omitted-content";
    pub const FOOTNOTE_MISSING: &str = "audit::footnote-missing";
    pub const FOOTNOTE_UNUSED: &str = "audit::footnote-unused";
    pub const UNDEFINED_NAME: &str = "audit::undefined-name";
    pub const MISSING_AREA: &str = "audit::missing-rule-area";
    pub const EMPTY_HEADING: &str = "audit::heading-without-content";
    pub const ROLL_WITHOUT_TARGET: &str = "audit::roll-without-target";
    pub const NOT_REPRODUCED: &str = "audit::figure-not-reproduced";
    pub const EDITOR_NOTE: &str = "audit::editor-note";
    pub const UNBALANCED: &str = "audit::unbalanced-brackets";
    pub const STRAY_SYMBOL: &str = "audit::stray-symbol";
    pub const LEFTOVER_MARKUP: &str = "audit::leftover-markup";
    pub const CHAT_TEXT: &str = "audit::chat-text";
    pub const DOUBLED_WORD: &str = "audit::doubled-word";
    pub const TRUNCATED: &str = "audit::truncated-text";
    pub const RUN_IN_HEADING: &str = "audit::run-in-heading";
    pub const RUN_IN_LIST: &str = "audit::run-in-list";
    pub const FLATTENED_TABLE: &str = "audit::flattened-table";
    pub const NAME_VARIANT: &str = "audit::name-variant";
    pub const CONVERSION_MISMATCH: &str = "audit::conversion-mismatch";
    pub const WRONG_TOPIC: &str = "audit::wrong-topic-reference";
    /// `check --against`: the encoding held against its book.
    pub const AGAINST_MISSING: &str = "against::not-encoded";
    pub const AGAINST_EXTRA: &str = "against::not-in-book";
    pub const AGAINST_TITLE: &str = "against::title-differs";
    pub const AGAINST_VALUE: &str = "against::value-differs";
}
