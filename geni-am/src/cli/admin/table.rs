//! Aligned text tables for people: a header row and one row per item,
//! columns padded to their widest cell (counted in characters), two spaces
//! apart, the last column unpadded.

/// A table being filled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    header: Vec<&'static str>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with these column titles.
    pub fn new(header: &[&'static str]) -> Table {
        Table {
            header: header.to_vec(),
            rows: Vec::new(),
        }
    }

    /// Adds a row (missing cells are empty, extra ones dropped).
    pub fn row(&mut self, cells: Vec<String>) {
        let mut cells = cells;
        cells.resize(self.header.len(), String::new());
        self.rows.push(cells);
    }

    /// Whether no row was added.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table as text, one line per row, each ending in a newline.
    pub fn render(&self) -> String {
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        let header: Vec<String> = self.header.iter().map(|h| (*h).to_owned()).collect();
        std::iter::once(&header)
            .chain(&self.rows)
            .map(|row| line(row, &widths))
            .collect()
    }
}

/// One row, padded to `widths`.
fn line(cells: &[String], widths: &[usize]) -> String {
    let last = cells.len().saturating_sub(1);
    let mut out = String::new();
    for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
        out.push_str(cell);
        if i < last {
            let pad = width - cell.chars().count() + 2;
            out.extend(std::iter::repeat_n(' ', pad));
        }
    }
    let trimmed = out.trim_end().len();
    out.truncate(trimmed);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_line_up_under_their_widest_cell() {
        let mut t = Table::new(&["HOST", "CPUS", "NOTE"]);
        t.row(vec!["h1".into(), "4/8".into(), "ok".into()]);
        t.row(vec!["host-two".into(), "12/16".into()]);
        assert_eq!(
            t.render(),
            "HOST      CPUS   NOTE\nh1        4/8    ok\nhost-two  12/16\n"
        );
    }

    #[test]
    fn widths_count_characters_not_bytes() {
        let mut t = Table::new(&["A", "B"]);
        t.row(vec!["é".into(), "x".into()]);
        assert_eq!(t.render(), "A  B\né  x\n");
    }
}
