//! Markdown-ish tables (`| a | b |` rows): empty cells and rows shorter than
//! the header. Conversions from PDF often keep a table's frame but lose its
//! values, which leaves a rule unplayable without saying so.

use crate::finding::{Finding, codes};
use crate::lines::{self, Line};

/// Cells of one row, without the outer pipes. `| a | |` has two cells.
fn cells(row: &str) -> Vec<&str> {
    let inner = row.trim().strip_prefix('|').unwrap_or(row);
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    inner.split('|').map(str::trim).collect()
}

/// `|---|:--:|` separates a markdown header from the body.
fn is_separator(row: &str) -> bool {
    let c = cells(row);
    !c.is_empty()
        && c.iter()
            .all(|c| !c.is_empty() && c.chars().all(|ch| "-:= ".contains(ch)))
}

pub fn check(lines: &[Line<'_>]) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !lines::is_table_row(lines[i].text()) {
            i += 1;
            continue;
        }
        let start = i;
        while i < lines.len() && lines::is_table_row(lines[i].text()) {
            i += 1;
        }
        out.extend(check_table(&lines[start..i]));
    }
    out
}

fn check_table(rows: &[Line<'_>]) -> Vec<Finding> {
    let rows: Vec<&Line<'_>> = rows.iter().filter(|r| !is_separator(r.text())).collect();
    let Some(header) = rows.first() else {
        return Vec::new();
    };
    let width = cells(header.text()).len();
    let (mut total, mut empty) = (0, 0);
    let mut short = Vec::new();
    for r in &rows {
        let c = cells(r.text());
        total += c.len();
        empty += c.iter().filter(|c| c.is_empty()).count();
        if c.len() < width {
            short.push(*r);
        }
    }
    let first = header.text_span().start;
    let last = rows.last().map_or(first, |r| r.text_span().end);
    let name = crate::headings::clip(cells(header.text()).first().copied().unwrap_or(""), 40);
    let mut out = Vec::new();
    if empty > 0 {
        out.push(
            Finding::warning(
                codes::EMPTY_TABLE_CELLS,
                first..last,
                format!(
                    "table \"{name}\" (line {}, {} rows) has {empty} empty cells out of {total}",
                    header.number(),
                    rows.len()
                ),
                format!("{empty} of {total} cells empty"),
            )
            .with_help(
                "Fill in the missing values from the source; an empty cell reads as \"no value\".",
            ),
        );
    }
    if let Some(r) = short.first() {
        out.push(
            Finding::warning(
                codes::SHORT_TABLE_ROW,
                r.text_span(),
                format!(
                    "table \"{name}\" (line {}): {} row{} fewer cells than the header's {width} (first at line {})",
                    header.number(),
                    short.len(),
                    if short.len() == 1 { " has" } else { "s have" },
                    r.number()
                ),
                "short row",
            )
            .with_help("Restore the missing cells or mark them explicitly (e.g. \"—\")."),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_cells_counted_once_per_table() {
        let text = "| Weapon | Hit |\n| Rifle | |\n| Gun | |\n\nText\n| A | 1 |\n";
        let f = check(&lines::split(text));
        assert_eq!(f.len(), 1);
        assert!(
            f[0].message.contains("2 empty cells out of 6"),
            "{}",
            f[0].message
        );
        assert_eq!(
            &text[f[0].span.clone()],
            "| Weapon | Hit |\n| Rifle | |\n| Gun | |"
        );
    }

    #[test]
    fn short_rows_and_separators() {
        let text = "| a | b | c |\n|---|---|---|\n| 1 | 2 | 3 |\n| 4 |\n";
        let f = check(&lines::split(text));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].code, codes::SHORT_TABLE_ROW);
        assert_eq!(&text[f[0].span.clone()], "| 4 |");
    }
}
