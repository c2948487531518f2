//! Splits a rulebook into lines that remember their byte offsets, so every
//! later check can report spans into the original text without re-searching.

use std::ops::Range;

#[derive(Debug, Clone, Copy)]
pub struct Line<'a> {
    /// Zero-based line index.
    pub idx: usize,
    /// Byte offset of the first byte of `raw` in the whole text.
    pub start: usize,
    /// The line without its terminator (`\n` or `\r\n`).
    pub raw: &'a str,
}

impl<'a> Line<'a> {
    /// The line without surrounding whitespace.
    pub fn text(&self) -> &'a str {
        self.raw.trim()
    }

    /// Byte offset (in the whole text) where `text()` starts.
    pub fn text_start(&self) -> usize {
        self.start + (self.raw.len() - self.raw.trim_start().len())
    }

    /// Span of `text()` in the whole text.
    pub fn text_span(&self) -> Range<usize> {
        let s = self.text_start();
        s..s + self.text().len()
    }

    pub fn is_blank(&self) -> bool {
        self.text().is_empty()
    }

    /// One-based number for messages, because editors count lines from 1.
    pub fn number(&self) -> usize {
        self.idx + 1
    }

    /// Span of a sub-slice of `raw` given by offsets relative to `text()`.
    pub fn sub_span(&self, rel: Range<usize>) -> Range<usize> {
        let s = self.text_start();
        s + rel.start..s + rel.end
    }
}

pub fn split(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (idx, piece) in text.split_inclusive('\n').enumerate() {
        let raw = piece.strip_suffix('\n').unwrap_or(piece);
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        out.push(Line { idx, start, raw });
        start += piece.len();
    }
    out
}

/// A line that starts a bullet list item (never a numbered heading).
pub fn bullet_body(text: &str) -> Option<&str> {
    for b in ["• ", "◦ ", "▪ ", "· ", "- ", "– ", "* "] {
        if let Some(rest) = text.strip_prefix(b) {
            return Some(rest.trim_start());
        }
    }
    if let Some(rest) = text.strip_prefix('•') {
        return Some(rest.trim_start());
    }
    None
}

pub fn is_table_row(text: &str) -> bool {
    text.starts_with('|')
}

/// Whether the document separates paragraphs with blank lines; layout cues such
/// as "a heading stands alone" are only meaningful when it does.
pub fn uses_blank_lines(lines: &[Line<'_>]) -> bool {
    let blank = lines.iter().filter(|l| l.is_blank()).count();
    lines.len() >= 3 && blank * 5 >= lines.len()
}

/// Index of the previous / next non-blank line.
pub fn prev_non_blank(lines: &[Line<'_>], i: usize) -> Option<usize> {
    (0..i).rev().find(|&j| !lines[j].is_blank())
}

pub fn next_non_blank(lines: &[Line<'_>], i: usize) -> Option<usize> {
    (i + 1..lines.len()).find(|&j| !lines[j].is_blank())
}

/// A line with blank lines (or the document edge) on both sides.
pub fn stands_alone(lines: &[Line<'_>], i: usize) -> bool {
    let before = i == 0 || lines[i - 1].is_blank();
    let after = i + 1 >= lines.len() || lines[i + 1].is_blank();
    before && after
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_survive_crlf_and_unicode() {
        let text = "é1\r\n  (2) Two\n";
        let lines = split(text);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1].text(), "(2) Two");
        assert_eq!(&text[lines[1].text_span()], "(2) Two");
        assert_eq!(lines[0].raw, "é1");
    }
}
