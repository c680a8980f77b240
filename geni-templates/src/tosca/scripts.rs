//! A Compute node's own lifecycle operations and artifacts as GENI
//! services. An operation (`Standard` `create`, `configure`, `start`,
//! run in that order at boot) whose implementation is a shell script at
//! an http(s) URL, directly or through an artifact, becomes an `execute`
//! service fetching and running it, its literal `inputs` passed as
//! environment variables; a deployment artifact that is an archive at an
//! http(s) URL becomes an `install` service unpacking it at its
//! `deploy_path`. Anything else (an Ansible playbook, a file of a CSAR
//! the aggregate never receives, teardown operations, other interfaces)
//! is refused.

use super::eval::value;
use crate::yaml::params::Params;
use crate::yaml::{Problems, Yaml};
use crate::{Execute, Install};

const BOOT_OPERATIONS: &[&str] = &["create", "configure", "start"];
const ARCHIVES: &[&str] = &[
    ".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tbz2", ".tar.xz", ".zip",
];

/// The services of node `name` from its `interfaces` and `artifacts`.
pub(crate) fn services(
    name: &str,
    template: &Yaml,
    params: &Params,
    problems: &mut Problems,
) -> (Vec<Install>, Vec<Execute>) {
    let artifacts = template.get("artifacts");
    let mut used = Vec::new();
    let mut executes = Vec::new();
    for (interface, operations) in template
        .get("interfaces")
        .map(Yaml::entries)
        .unwrap_or_default()
    {
        let interface_name = interface.as_str().unwrap_or("");
        if !matches!(
            interface_name,
            "Standard" | "tosca.interfaces.node.lifecycle.Standard"
        ) {
            problems.refuse(
                interface.line,
                format!("node '{name}': interface {interface_name}: only the Standard lifecycle is run by this aggregate"),
            );
            continue;
        }
        for op in BOOT_OPERATIONS {
            if let Some(operation) = operations.get(op)
                && let Some(e) =
                    operation_script(name, op, operation, artifacts, &mut used, params, problems)
            {
                executes.push(e);
            }
        }
        for (op, operation) in operations.entries() {
            let op = op.as_str().unwrap_or("");
            if !BOOT_OPERATIONS.contains(&op) && op != "inputs" {
                problems.refuse(
                    operation.line,
                    format!("node '{name}': operation {op}: the aggregate runs scripts only at boot (create, configure, start)"),
                );
            }
        }
    }
    let mut installs = Vec::new();
    for (key, artifact) in artifacts.map(Yaml::entries).unwrap_or_default() {
        let artifact_name = key.as_str().unwrap_or("");
        if used.iter().any(|u| u == artifact_name) {
            continue;
        }
        let file = artifact
            .as_str()
            .or_else(|| artifact.get("file").and_then(Yaml::as_str))
            .unwrap_or("");
        if is_url(file) && ARCHIVES.iter().any(|a| file.ends_with(a)) {
            let path = artifact
                .get("deploy_path")
                .and_then(|p| value(params, p, problems))
                .and_then(|p| p.as_str().map(str::to_owned))
                .unwrap_or_else(|| "/tmp".to_owned());
            installs.push(Install {
                url: file.to_owned(),
                install_path: path,
            });
        } else {
            problems.refuse(
                key.line,
                format!("node '{name}': artifact {artifact_name} ('{file}'): only archives at http(s) URLs are installed by this aggregate"),
            );
        }
    }
    (installs, executes)
}

fn is_url(s: &str) -> bool {
    s.starts_with("http://") || s.starts_with("https://")
}

fn operation_script(
    name: &str,
    op: &str,
    operation: &Yaml,
    artifacts: Option<&Yaml>,
    used: &mut Vec<String>,
    params: &Params,
    problems: &mut Problems,
) -> Option<Execute> {
    let implementation = operation
        .as_str()
        .or_else(|| {
            operation.get("implementation").and_then(|i| {
                i.as_str()
                    .or_else(|| i.get("primary").and_then(Yaml::as_str))
            })
        })
        .unwrap_or("");
    let file = match artifacts.and_then(|a| a.get(implementation)) {
        Some(artifact) => {
            used.push(implementation.to_owned());
            artifact
                .as_str()
                .or_else(|| artifact.get("file").and_then(Yaml::as_str))
                .unwrap_or("")
        }
        None => implementation,
    };
    let refuse = |problems: &mut Problems, why: &str| {
        problems.refuse(
            operation.line,
            format!(
                "node '{name}': operation {op} ('{file}'): {why}: not supported by this aggregate"
            ),
        );
        None
    };
    if file.ends_with(".yml") || file.ends_with(".yaml") {
        return refuse(
            problems,
            "an Ansible playbook, which needs a configuration manager",
        );
    }
    if !is_url(file) {
        return refuse(
            problems,
            "a file beside the template (in a CSAR) the aggregate never receives; give an http(s) URL",
        );
    }
    let mut env = Vec::new();
    for (key, input) in operation
        .get("inputs")
        .map(Yaml::entries)
        .unwrap_or_default()
    {
        let Some(v) = value(params, input, problems) else {
            continue;
        };
        match (key.as_str(), v.as_str()) {
            (Some(k), Some(v)) if k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => {
                env.push(format!("{k}={}", quote(v)));
            }
            _ => return refuse(problems, "an input that is not plain text"),
        }
    }
    let env = if env.is_empty() {
        String::new()
    } else {
        format!("env {} ", env.join(" "))
    };
    Some(Execute {
        shell: "sh".to_owned(),
        command: format!("curl -fsSL {} | {env}sh", quote(file)),
    })
}

/// `s` in single quotes for a POSIX shell.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}
