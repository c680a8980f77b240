//! The scheduler's choice of a host: the first MONITORED host that meets
//! the VM's SCHED_REQUIREMENTS and has room for its CPU and memory, or the
//! SCHED_MESSAGE oned's scheduler writes when none has.

use super::inventory::Host;
use super::record::Pooled;
use crate::xml::Element;

/// The index of the host to place a VM charging `cpu` (percent) and
/// `memory` (KiB) on; `usage(index)` gives the CPU and memory a host has
/// allocated. The error is the scheduler's message.
pub fn choose_host(
    hosts: &[Host],
    usage: impl Fn(usize) -> (i64, i64),
    cpu: i64,
    memory: i64,
    requirements: Option<&str>,
) -> Result<usize, String> {
    let mut short_cpu = Vec::new();
    let mut short_mem = Vec::new();
    let mut matched = false;
    for (index, host) in hosts.iter().enumerate() {
        if !host.is_monitored() || requirements.is_some_and(|r| !requirements_match(r, host.doc()))
        {
            continue;
        }
        matched = true;
        let (used_cpu, used_mem) = usage(index);
        if memory > host.max_mem() - used_mem {
            short_mem.push(host.id().to_string());
        } else if cpu > host.max_cpu() - used_cpu {
            short_cpu.push(host.id().to_string());
        } else {
            return Ok(index);
        }
    }
    if !matched {
        return Err("[HOST] No host meets SCHED_REQUIREMENTS".to_owned());
    }
    if !short_mem.is_empty() {
        return Err(format!(
            "[HOST] Not enough MEMORY on hosts: {}",
            short_mem.join(", ")
        ));
    }
    Err(format!(
        "[HOST] Not enough CPU on hosts: {}",
        short_cpu.join(", ")
    ))
}

/// Evaluates a SCHED_REQUIREMENTS expression against a host: terms
/// `ATTR = value` / `ATTR != value` joined by `&` and `|` (no parentheses).
pub fn requirements_match(expression: &str, host: &Element) -> bool {
    expression.split('|').any(|conjunction| {
        conjunction.split('&').all(|term| {
            let term = term.trim();
            let (key, negate, value) = match term.split_once("!=") {
                Some((k, v)) => (k, true, v),
                None => match term.split_once('=') {
                    Some((k, v)) => (k, false, v),
                    None => return false,
                },
            };
            let key = key.trim();
            let value = value.trim().trim_matches('"');
            let actual = match key {
                "ID" | "NAME" | "CLUSTER_ID" | "STATE" => host.value_at(key),
                other => host.value_at(&format!("TEMPLATE/{other}")),
            };
            (actual == value) != negate
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud::seed;

    #[test]
    fn requirements_on_the_seeded_host() {
        let host = seed::element(seed::HOST);
        assert!(requirements_match("ID = 0", &host));
        assert!(requirements_match("NAME = \"localhost\"", &host));
        assert!(!requirements_match("ID = 3 | NAME = \"other\"", &host));
        assert!(requirements_match(
            "HOSTNAME = \"elsewhere\" | ID != 4",
            &host
        ));
    }

    #[test]
    fn a_full_host_gives_the_schedulers_message() {
        let hosts = [Host::new(0, seed::element(seed::HOST))];
        let full = |_| (hosts[0].max_cpu(), 0);
        assert_eq!(
            choose_host(&hosts, full, 100, 1024, None),
            Err("[HOST] Not enough CPU on hosts: 0".to_owned())
        );
        let empty = |_| (0, 0);
        assert_eq!(choose_host(&hosts, empty, 100, 1024, None), Ok(0));
        assert_eq!(
            choose_host(&hosts, empty, 100, 1024, Some("ID = 7")),
            Err("[HOST] No host meets SCHED_REQUIREMENTS".to_owned())
        );
    }
}
