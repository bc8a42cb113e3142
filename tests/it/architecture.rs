//! The layers of `src/`, bottom to top, and the checks that keep them: a
//! module uses its own layer and those below, never one above; no file
//! reaches itself through its imports; every top-level module has a layer;
//! and `docs/architecture.md` lists the same layers in the same order.

mod imports;

use std::path::Path;

use imports::{Import, Library, Module, circles, name};

/// Bottom to top: each layer's name and its top-level modules.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "core",
        &["domain", "catalog", "config", "signing", "secret"],
    ),
    (
        "edges",
        &[
            "egress",
            "notify",
            "metrics",
            "file_limit",
            "instance_lock",
            "keyfile",
            "telemetry",
        ],
    ),
    ("store", &["store"]),
    ("producer helpers", &["outbox", "thresholds"]),
    ("cluster", &["cluster"]),
    ("delivery", &["delivery"]),
    ("conformance", &["conformance"]),
    ("http", &["http"]),
    ("pages", &["web", "dashboard", "portal"]),
    ("commands", &["app", "cli", "demo", "runtime"]),
];

fn library() -> Library {
    Library::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

/// The layer of a top-level module, counted from 1.
fn layer_of(top: &str) -> Option<usize> {
    LAYERS
        .iter()
        .position(|(_, modules)| modules.contains(&top))
        .map(|i| i + 1)
}

fn top(module: &Module) -> Option<&str> {
    module.first().map(String::as_str)
}

fn layer_list() -> String {
    LAYERS
        .iter()
        .enumerate()
        .map(|(i, (layer, modules))| format!("  {}. {layer}: {}\n", i + 1, modules.join(", ")))
        .collect()
}

fn describe(library: &Library, i: &Import) -> String {
    format!(
        "{} ({}) uses {} ({})",
        name(&i.from),
        library.path_of(&i.from),
        i.written,
        name(&i.to)
    )
}

#[test]
fn no_module_uses_a_module_in_a_higher_layer() {
    let library = library();
    let upward: Vec<String> = library
        .imports()
        .iter()
        .filter_map(|i| {
            let (from, to) = (layer_of(top(&i.from)?)?, layer_of(top(&i.to)?)?);
            (from < to).then(|| {
                let layer = |n: usize| LAYERS[n - 1].0;
                format!(
                    "  {}: layer {from} ({}) uses layer {to} ({})\n",
                    describe(&library, i),
                    layer(from),
                    layer(to)
                )
            })
        })
        .collect();
    assert!(
        upward.is_empty(),
        "a module uses a module in a higher layer; move the shared piece down, or pass a \
         Recipient or a value in:\n{}the layers, bottom to top (tests/it/architecture.rs):\n{}",
        upward.concat(),
        layer_list()
    );
}

#[test]
fn no_file_reaches_itself_through_its_imports() {
    let library = library();
    let imports = library.imports();
    let found: Vec<String> = circles(&imports)
        .into_iter()
        .map(|circle| {
            let mut names: Vec<String> = circle.iter().map(|i| name(&i.from)).collect();
            names.push(name(&circle[0].from));
            let hops: String = circle
                .iter()
                .map(|i| format!("    {}\n", describe(&library, i)))
                .collect();
            format!("  {}\n{hops}", names.join(" -> "))
        })
        .collect();
    assert!(
        found.is_empty(),
        "files import each other in a circle; move what they share into a file both use:\n{}",
        found.concat()
    );
}

#[test]
fn every_top_level_module_is_in_exactly_one_layer() {
    let library = library();
    let tops: std::collections::BTreeSet<&str> = library.files.keys().filter_map(top).collect();
    let unplaced: Vec<&str> = tops
        .iter()
        .copied()
        .filter(|t| layer_of(t).is_none())
        .collect();
    let listed: Vec<&str> = LAYERS.iter().flat_map(|(_, m)| m.iter().copied()).collect();
    let unknown: Vec<&str> = listed
        .iter()
        .copied()
        .filter(|m| !tops.contains(m))
        .collect();
    let twice: Vec<&str> = listed
        .iter()
        .copied()
        .filter(|m| listed.iter().filter(|n| *n == m).count() > 1)
        .collect();
    assert!(
        unplaced.is_empty() && unknown.is_empty() && twice.is_empty(),
        "in no layer: {unplaced:?}; listed but not in src/: {unknown:?}; listed twice: {twice:?}. \
         Place each top-level module of src/ in one layer of LAYERS (tests/it/architecture.rs) \
         and of docs/architecture.md. The layers, bottom to top:\n{}",
        layer_list()
    );
}

/// The numbered lines under `## Layers`: `3. store (`store`): what it holds`
/// gives the name `store` and the modules `["store"]`.
fn documented_layers(page: &str) -> Vec<(String, Vec<String>)> {
    let section = page
        .split("\n## ")
        .find(|s| s.starts_with("Layers"))
        .unwrap_or_default();
    section
        .lines()
        .filter_map(|line| {
            let (number, rest) = line.split_once(". ")?;
            number.parse::<usize>().ok()?;
            let head = rest.split(": ").next().unwrap_or(rest);
            let (layer, modules) = head.split_once(" (")?;
            let modules = modules
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect();
            Some((layer.trim_matches('*').to_string(), modules))
        })
        .collect()
}

#[test]
fn the_architecture_page_lists_the_same_layers_in_the_same_order() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md");
    let page = std::fs::read_to_string(&path).expect("docs/architecture.md");
    let expected: Vec<(String, Vec<String>)> = LAYERS
        .iter()
        .map(|(layer, modules)| {
            let modules = modules.iter().map(|m| m.to_string()).collect();
            (layer.to_string(), modules)
        })
        .collect();
    assert_eq!(
        documented_layers(&page),
        expected,
        "the numbered list under `## Layers` in docs/architecture.md (lines like \
         \"1. core (`domain`, `catalog`, …): what it holds\") must name the layers of \
         tests/it/architecture.rs, bottom to top:\n{}",
        layer_list()
    );
}
