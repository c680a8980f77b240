//! The layers of `geni-am`, checked from its sources: each top-level module
//! may name (`crate::…`, in code or in doc links) only the modules below
//! it, as docs/ARCHITECTURE.md draws them, and the submodules of one
//! module never import each other in a circle. The table here and the one
//! in docs/ARCHITECTURE.md are the same; change both together.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each top-level module and the modules of this crate it may import.
const LAYERS: &[(&str, &[&str])] = &[
    ("model", &[]),
    ("time", &[]),
    ("geni", &[]),
    ("telemetry", &[]),
    ("config", &["model"]),
    ("store", &["model"]),
    ("core", &["model", "store", "config", "time"]),
    ("api", &["core", "model", "store", "config", "geni", "time"]),
    ("server", &["api", "config", "geni", "model", "telemetry"]),
    (
        "jobs",
        &["core", "model", "store", "config", "time", "telemetry"],
    ),
    (
        "operator",
        &["core", "model", "store", "config", "time", "telemetry"],
    ),
    ("client", &["config", "time"]),
    (
        "service",
        &[
            "api", "server", "jobs", "operator", "core", "store", "model", "config", "time",
        ],
    ),
    ("bench", &["client", "service", "config", "model", "time"]),
    (
        "cli",
        &[
            "bench",
            "service",
            "server",
            "operator",
            "api",
            "jobs",
            "core",
            "store",
            "model",
            "config",
            "client",
            "geni",
            "time",
            "telemetry",
        ],
    ),
];

/// The source files of `module` (`src/<module>.rs` and `src/<module>/**`).
fn sources(src: &Path, module: &str) -> Vec<PathBuf> {
    let mut files = vec![];
    let file = src.join(format!("{module}.rs"));
    if file.is_file() {
        files.push(file);
    }
    let mut dirs = vec![src.join(module)];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files
}

/// The modules of this crate `text` names: `crate::a` and `crate::{a, b}`.
fn named_modules(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (at, _) in text.match_indices("crate::") {
        if text[..at].ends_with('$') {
            continue;
        }
        let rest = &text[at + "crate::".len()..];
        let heads: Vec<&str> = match rest.strip_prefix('{') {
            Some(group) => group
                .split('}')
                .next()
                .unwrap_or("")
                .split(',')
                .map(str::trim)
                .collect(),
            None => vec![rest],
        };
        for head in heads {
            let name: String = head
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                names.insert(name);
            }
        }
    }
    names
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn every_top_level_module_is_in_the_layer_table() {
    let table: BTreeSet<&str> = LAYERS.iter().map(|(m, _)| *m).collect();
    let mut missing = vec![];
    for entry in std::fs::read_dir(src()).expect("geni-am/src") {
        let path = entry.expect("a directory entry").path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if path.extension().is_some_and(|e| e == "rs")
            && !["lib", "main"].contains(&stem)
            && !table.contains(stem)
        {
            missing.push(stem.to_string());
        }
    }
    assert!(missing.is_empty(), "modules with no layer: {missing:?}");
}

#[test]
fn no_module_imports_a_module_above_it() {
    let src = src();
    let allowed: BTreeMap<&str, &[&str]> = LAYERS.iter().copied().collect();
    let mut breaches = vec![];
    for (module, may) in LAYERS {
        for file in sources(&src, module) {
            let text = std::fs::read_to_string(&file).expect("a source file");
            for name in named_modules(&text) {
                if name != *module
                    && allowed.contains_key(name.as_str())
                    && !may.contains(&name.as_str())
                {
                    breaches.push(format!(
                        "{} names crate::{name}",
                        file.strip_prefix(&src).unwrap_or(&file).display()
                    ));
                }
            }
        }
    }
    assert!(
        breaches.is_empty(),
        "imports against the layers:\n{}",
        breaches.join("\n")
    );
}

#[test]
fn the_layer_table_has_no_cycle() {
    let graph: BTreeMap<String, BTreeSet<String>> = LAYERS
        .iter()
        .map(|(m, may)| (m.to_string(), may.iter().map(|n| n.to_string()).collect()))
        .collect();
    for (module, _) in LAYERS {
        assert!(
            !path_exists(&graph, module, module),
            "{module} reaches itself"
        );
    }
}

/// The submodule of `top` that `text` (a file of submodule `from` of
/// `top`, `depth` levels below `top`) names through `super::` or
/// `crate::top::`.
fn sibling_imports(top: &str, depth: usize, text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let direct = format!("crate::{top}::");
    let mut prefixes = vec![direct];
    if depth == 1 {
        prefixes.push("super::".to_owned());
    }
    for prefix in &prefixes {
        for (at, _) in text.match_indices(prefix.as_str()) {
            let rest = &text[at + prefix.len()..];
            let groups: Vec<&str> = match rest.strip_prefix('{') {
                Some(group) => group.split('}').next().unwrap_or("").split(',').collect(),
                None => vec![rest],
            };
            for head in groups {
                let name: String = head
                    .trim()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() && name != "self" && name != "super" {
                    names.insert(name);
                }
            }
        }
    }
    names
}

#[test]
fn no_two_submodules_of_a_module_import_each_other_in_a_circle() {
    let src = src();
    let mut circles = vec![];
    for (top, _) in LAYERS {
        let dir = src.join(top);
        // submodule -> the sibling submodules it names
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for file in sources(&src, top) {
            let Ok(rel) = file.strip_prefix(&dir) else {
                continue;
            };
            let parts: Vec<String> = rel
                .iter()
                .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_owned())
                .collect();
            let from = parts[0].clone();
            let text = std::fs::read_to_string(&file).expect("a source file");
            let named = sibling_imports(top, parts.len(), &text);
            graph
                .entry(from.clone())
                .or_default()
                .extend(named.into_iter().filter(|n| *n != from));
        }
        for (from, tos) in &graph {
            for to in tos {
                if path_exists(&graph, to, from) {
                    circles.push(format!(
                        "{top}::{from} -> {top}::{to} -> … -> {top}::{from}"
                    ));
                }
            }
        }
    }
    assert!(
        circles.is_empty(),
        "submodules in a circle:\n{}",
        circles.join("\n")
    );
}

/// Whether `target` can be reached from `from` along the edges of `graph`.
fn path_exists(graph: &BTreeMap<String, BTreeSet<String>>, from: &str, target: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from.to_owned()];
    while let Some(next) = todo.pop() {
        for to in graph.get(&next).into_iter().flatten() {
            if to == target {
                return true;
            }
            if seen.insert(to.clone()) {
                todo.push(to.clone());
            }
        }
    }
    false
}

#[test]
fn the_reader_sees_single_and_grouped_imports() {
    let names =
        named_modules("use crate::core::Aggregate;\nuse crate::{store::Store, model};\n$crate::x");
    assert_eq!(
        names,
        ["core", "model", "store"]
            .into_iter()
            .map(String::from)
            .collect()
    );
}

#[test]
fn a_circle_of_submodules_is_seen() {
    let text = "use super::networks::attach;\nuse crate::jobs::{observe, error::JobError};";
    let named = sibling_imports("jobs", 1, text);
    assert_eq!(
        named,
        ["error", "networks", "observe"]
            .into_iter()
            .map(String::from)
            .collect()
    );
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("execute".to_owned(), named),
        ("networks".to_owned(), ["execute".to_owned()].into()),
    ]
    .into();
    assert!(path_exists(&graph, "networks", "execute"));
    assert!(path_exists(&graph, "execute", "execute"));
    assert!(!path_exists(&graph, "observe", "execute"));
}
