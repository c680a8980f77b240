//! `geni-am backend check` against oned: the endpoint answers, the session
//! authenticates (user, groups, `oneadmin` membership), the server version
//! is supported (5.10 to 7.x), each sliver type's template exists with
//! CPU, MEMORY and a networked CONTEXT, the images are READY, the links'
//! parent network has free addresses (or the VNET template reads), hosts
//! are usable with free capacity, and the account's quotas leave room.
//! Every call is a read; nothing is created. When the endpoint or the
//! session fails, the checks that need them are not run.

use super::config::{OneConfig, OneLinks};
use super::docs::{self, HostDoc, Limit, Quotas, Usage, UserDoc};
use super::driver::parse_version;
use super::rpc::{Answer, ErrorCode, OneClient, OneRpc, Param, RpcError};
use geni_am_backend::check::{Finding, configuration};
use vnet_template::check_vnet_template;

mod vnet_template;

/// Oldest server release the driver supports.
const OLDEST: (u32, u32) = (5, 10);
/// First major release the driver does not know.
const NEWEST_MAJOR: u32 = 7;

/// Runs every check against the oned `config` names.
pub fn check(config: &OneConfig) -> Vec<Finding> {
    let client = match config.client() {
        Ok(client) => client,
        Err(err) => return vec![configuration(err)],
    };
    let mut findings = Vec::new();
    let version = client.call("one.system.version", &[]);
    match &version {
        Err(RpcError::Transport { detail, .. }) => {
            findings.push(Finding::fail(
                "endpoint",
                format!(
                    "{detail}; is oned running, and is backend.opennebula.endpoint reachable from this host? \
                     (oned listens on PORT 2633 of LISTEN_ADDRESS in /etc/one/oned.conf)"
                ),
            ));
            return skipped(findings);
        }
        Err(RpcError::Fault { code, message, .. }) => {
            findings.push(Finding::fail(
                "endpoint",
                format!(
                    "{} answers XML-RPC, but not as oned does (fault {code}: {message}); \
                     does backend.opennebula.endpoint name oned's /RPC2?",
                    config.endpoint
                ),
            ));
            return skipped(findings);
        }
        _ => findings.push(Finding::pass(
            "endpoint",
            format!("{} answers as OpenNebula", config.endpoint),
        )),
    }
    let login = config
        .session()
        .map(|s| s.user().to_owned())
        .unwrap_or_default();
    let user = match whoami(&client, &login) {
        Ok(user) => user,
        Err(finding) => {
            findings.push(finding);
            return skipped(findings);
        }
    };
    findings.push(account(&user));
    findings.push(server_version(version));
    for kind in &config.sliver_types {
        findings.push(sliver_type(
            &client,
            &kind.name,
            kind.template_id,
            config.links.is_some(),
        ));
    }
    findings.push(images(&client, &config.images));
    findings.push(links(&client, config.links.as_ref()));
    findings.push(hosts(&client, config));
    findings.push(quotas(&user.quotas, config));
    findings
}

/// The findings so far, and a note that the rest needs what failed.
fn skipped(mut findings: Vec<Finding>) -> Vec<Finding> {
    findings.push(Finding::fail(
        "remaining checks",
        "not run: they need a reachable endpoint and an accepted session",
    ));
    findings
}

/// Calls a method that answers an XML document; a failure is its message.
fn document(client: &OneClient, method: &str, params: &[Param]) -> Result<String, RpcError> {
    match client.call(method, params)? {
        Answer::Str(xml) => Ok(xml),
        other => Err(RpcError::Fault {
            method: method.to_owned(),
            code: 0,
            message: format!("unexpected answer {other:?}"),
        }),
    }
}

/// The caller's own USER document, or the failed `session` finding.
fn whoami(client: &OneClient, user: &str) -> Result<UserDoc, Finding> {
    let xml = document(client, "one.user.info", &[Param::Int(-1)]).map_err(|err| match err {
        RpcError::Refused {
            code: ErrorCode::Authentication,
            ..
        } => Finding::fail(
            "session",
            format!(
                "OpenNebula refused the session of user `{user}`: check the password or token in \
                 backend.opennebula.session or the one_auth file (a login token expires: \
                 `oneuser token-create {user} --time SECONDS` makes a new one)"
            ),
        ),
        other => Finding::fail("session", other.to_string()),
    })?;
    docs::parse_user(&xml).map_err(|e| Finding::fail("session", e.to_string()))
}

/// Who the aggregate acts as, and what its groups allow.
fn account(user: &UserDoc) -> Finding {
    let groups: Vec<String> = user.groups.iter().map(i64::to_string).collect();
    let rights = if user.in_oneadmin_group() {
        "in the oneadmin group: restricted attributes are allowed".to_owned()
    } else {
        "not in the oneadmin group: the VM_RESTRICTED_ATTR and VNET_RESTRICTED_ATTR of \
         oned.conf apply to what the aggregate sends (keep them out of the templates)"
            .to_owned()
    };
    Finding::pass(
        "session",
        format!(
            "authenticated as `{}` (user {}), primary group `{}` ({}), groups [{}]; {rights}",
            user.name,
            user.id,
            user.group_name,
            user.gid,
            groups.join(", ")
        ),
    )
}

/// Whether the release `one.system.version` reported is supported.
fn server_version(answer: Result<Answer, RpcError>) -> Finding {
    let text = match answer {
        Ok(Answer::Str(text)) => text,
        Ok(other) => return Finding::fail("version", format!("unexpected answer {other:?}")),
        Err(err) => return Finding::fail("version", err.to_string()),
    };
    match parse_version(&text) {
        Some(version) if version >= OLDEST && version.0 <= NEWEST_MAJOR => Finding::pass(
            "version",
            format!("OpenNebula {text} (supported: 5.10 to 7.x)"),
        ),
        Some(_) => Finding::fail(
            "version",
            format!("OpenNebula {text} is not supported (5.10 to 7.x are)"),
        ),
        None => Finding::fail("version", format!("unreadable version `{text}`")),
    }
}

/// The template of one sliver type: it exists, sizes the VM and gives it
/// a networked CONTEXT.
fn sliver_type(client: &OneClient, name: &str, template_id: i32, links: bool) -> Finding {
    let subject = format!("sliver type {name}");
    let xml = match document(client, "one.template.info", &[Param::Int(template_id)]) {
        Ok(xml) => xml,
        Err(err) if err.is_no_exists() => {
            return Finding::fail(
                subject,
                format!(
                    "template {template_id} does not exist or this user cannot use it; \
                     fix template_id (`onetemplate list`) or share it (`onetemplate chmod {template_id} 604`)"
                ),
            );
        }
        Err(err) => return Finding::fail(subject, err.to_string()),
    };
    let template = match docs::parse_template(&xml) {
        Ok(template) => template,
        Err(err) => return Finding::fail(subject, err.to_string()),
    };
    let missing: Vec<&str> = [("CPU", &template.cpu), ("MEMORY", &template.memory)]
        .into_iter()
        .filter(|(_, value)| value.is_none())
        .map(|(key, _)| key)
        .collect();
    if !missing.is_empty() {
        return Finding::fail(
            subject,
            format!(
                "template {template_id} `{}` has no {}; add it (`onetemplate update {template_id}`)",
                template.name,
                missing.join(" and ")
            ),
        );
    }
    let networked = template
        .context
        .iter()
        .any(|(key, value)| key == "NETWORK" && value.eq_ignore_ascii_case("YES"));
    if !networked {
        return Finding::fail(
            subject,
            format!(
                "template {template_id} `{}` has no CONTEXT = [ NETWORK = \"YES\" ]: VMs would not \
                 configure their addresses; add it (`onetemplate update {template_id}`)",
                template.name
            ),
        );
    }
    let nics = match (template.nics.len(), links) {
        (0, _) => "no NIC of its own".to_owned(),
        (n, true) => format!("{n} NIC(s), link NICs come after them"),
        (n, false) => format!("{n} NIC(s)"),
    };
    Finding::pass(
        subject,
        format!(
            "template {template_id} `{}`: CPU {}, MEMORY {} MiB, CONTEXT with NETWORK = \"YES\", {nics}",
            template.name,
            template.cpu.unwrap_or_default(),
            template.memory.unwrap_or_default()
        ),
    )
}

/// The name of an image state.
fn image_state(state: i64) -> &'static str {
    const NAMES: [&str; 11] = [
        "INIT",
        "READY",
        "USED",
        "DISABLED",
        "LOCKED",
        "ERROR",
        "CLONE",
        "DELETE",
        "USED_PERS",
        "LOCKED_USED",
        "LOCKED_USED_PERS",
    ];
    usize::try_from(state)
        .ok()
        .and_then(|i| NAMES.get(i))
        .copied()
        .unwrap_or("unknown")
}

/// The configured images exist, are OS images and are READY (or USED).
fn images(client: &OneClient, configured: &[String]) -> Finding {
    let params = [-2, -1, -1].map(Param::Int);
    let pool = match document(client, "one.imagepool.info", &params)
        .map_err(|e| e.to_string())
        .and_then(|xml| docs::parse_image_pool(&xml).map_err(|e| e.to_string()))
    {
        Ok(pool) => pool,
        Err(err) => return Finding::fail("images", err),
    };
    if configured.is_empty() {
        let offered: Vec<&str> = pool
            .iter()
            .filter(|i| i.is_bootable())
            .map(|i| i.name.as_str())
            .collect();
        return Finding::pass(
            "images",
            if offered.is_empty() {
                "none configured and no READY OS image visible: VMs boot their templates' disks"
                    .to_owned()
            } else {
                format!(
                    "none configured: every READY OS image is offered: {}",
                    offered.join(", ")
                )
            },
        );
    }
    let mut problems = Vec::new();
    for name in configured {
        match pool.iter().find(|i| &i.name == name) {
            None => problems.push(format!(
                "`{name}` does not exist or is not visible to this user (`oneimage list`)"
            )),
            Some(image) if !image.is_os() => {
                problems.push(format!("`{name}` (image {}) is not an OS image", image.id))
            }
            Some(image) if !image.is_bootable() => problems.push(format!(
                "`{name}` (image {}) is {}, not READY (`oneimage show {}`)",
                image.id,
                image_state(image.state),
                image.id
            )),
            Some(_) => {}
        }
    }
    if problems.is_empty() {
        Finding::pass(
            "images",
            format!("{} READY: {}", configured.len(), configured.join(", ")),
        )
    } else {
        Finding::fail(
            "images",
            format!("{}; fix backend.opennebula.images", problems.join("; ")),
        )
    }
}

/// The parent network has room for a reservation, or the VNET template reads.
fn links(client: &OneClient, links: Option<&OneLinks>) -> Finding {
    let Some(links) = links else {
        return Finding::pass("links", "not configured: requests with links are refused");
    };
    let parent = match (links.parent_network, &links.template) {
        (Some(parent), _) => parent,
        (None, Some(template)) => {
            return match check_vnet_template(template) {
                Ok(()) => Finding::pass(
                    "links",
                    "a VNET is allocated per link from backend.opennebula.links.template (it reads; oned checks its driver and ranges at the first link)",
                ),
                Err(problem) => Finding::fail(
                    "links",
                    format!("backend.opennebula.links.template: {problem}"),
                ),
            };
        }
        (None, None) => return Finding::fail("links", "set parent_network or template"),
    };
    let vnet = match document(client, "one.vn.info", &[Param::Int(parent)]) {
        Ok(xml) => match docs::parse_vnet(&xml) {
            Ok(vnet) => vnet,
            Err(err) => return Finding::fail("links", err.to_string()),
        },
        Err(err) if err.is_no_exists() => {
            return Finding::fail(
                "links",
                format!(
                    "parent network {parent} does not exist or this user cannot use it; \
                     fix links.parent_network (`onevnet list`) or grant USE (`onevnet chmod {parent} 604`)"
                ),
            );
        }
        Err(err) => return Finding::fail("links", err.to_string()),
    };
    let size: i64 = vnet.ars.iter().map(|ar| ar.size).sum();
    let free = (size - vnet.used_leases).max(0);
    let message = format!(
        "parent network {parent} `{}`: {free} of {size} addresses free, {} per link",
        vnet.name, links.size
    );
    if free < i64::from(links.size) {
        Finding::fail(
            "links",
            format!(
                "{message}: no room for a reservation; add an address range (`onevnet addar {parent}`) or lower links.size"
            ),
        )
    } else {
        Finding::pass(
            "links",
            format!(
                "{message}, room for {} links",
                free / i64::from(links.size.max(1))
            ),
        )
    }
}

/// Usable hosts and what they have left for the sliver types.
fn hosts(client: &OneClient, config: &OneConfig) -> Finding {
    let pool = match document(client, "one.hostpool.info", &[])
        .map_err(|e| e.to_string())
        .and_then(|xml| docs::parse_host_pool(&xml).map_err(|e| e.to_string()))
    {
        Ok(pool) => pool,
        Err(err) => return Finding::fail("hosts", err),
    };
    let usable: Vec<&HostDoc> = pool.iter().filter(|h| h.is_usable()).collect();
    let fits = |h: &HostDoc| {
        config
            .sliver_types
            .iter()
            .any(|t| h.has_room_for(t.cpu, t.memory_mb))
    };
    let listed: Vec<String> = usable
        .iter()
        .map(|h| {
            format!(
                "{} ({}, {} CPU, {} MiB free)",
                h.name,
                h.hypervisor.as_deref().unwrap_or("no hypervisor"),
                h.free_cpus(),
                h.free_mem_mib()
            )
        })
        .collect();
    let summary = format!("{} of {} usable", usable.len(), pool.len());
    if usable.is_empty() {
        Finding::fail(
            "hosts",
            format!(
                "{summary}: no host is MONITORED and enabled (`onehost list`; `onehost enable ID`)"
            ),
        )
    } else if !usable.iter().any(|h| fits(h)) {
        Finding::fail(
            "hosts",
            format!(
                "{summary}, none with room for the smallest sliver type: {}",
                listed.join(", ")
            ),
        )
    } else {
        Finding::pass("hosts", format!("{summary}: {}", listed.join(", ")))
    }
}

/// The account's quotas: what they leave for VMs and link addresses.
fn quotas(quotas: &Quotas, config: &OneConfig) -> Finding {
    let show = |usage: &Usage| match usage.limit {
        Limit::Default => format!("{} used (default quota)", usage.used),
        Limit::Unlimited => format!("{} used (unlimited)", usage.used),
        Limit::At(limit) => format!("{} of {limit}", usage.used),
    };
    let mut parts = Vec::new();
    let mut exhausted = Vec::new();
    match &quotas.vm {
        None => parts.push("no VM quota set".to_owned()),
        Some(vm) => {
            parts.push(format!(
                "VMS {}, CPU {}, MEMORY {} MiB",
                show(&vm.vms),
                show(&vm.cpu),
                show(&vm.memory_mb)
            ));
            let smallest_cpu = config
                .sliver_types
                .iter()
                .map(|t| t.cpu)
                .fold(f64::INFINITY, f64::min);
            let smallest_mem = config
                .sliver_types
                .iter()
                .map(|t| t.memory_mb as f64)
                .fold(f64::INFINITY, f64::min);
            for (name, usage, need) in [
                ("VMS", vm.vms, 1.0),
                ("CPU", vm.cpu, smallest_cpu),
                ("MEMORY", vm.memory_mb, smallest_mem),
            ] {
                if usage.left().is_some_and(|left| left < need) {
                    exhausted.push(name);
                }
            }
        }
    }
    if let Some((parent, size)) = config
        .links
        .as_ref()
        .and_then(|l| l.parent_network.map(|p| (p, l.size)))
        && let Some(net) = quotas
            .networks
            .iter()
            .find(|n| n.network == i64::from(parent))
    {
        parts.push(format!("LEASES on network {parent} {}", show(&net.leases)));
        if net.leases.left().is_some_and(|left| left < f64::from(size)) {
            exhausted.push("LEASES");
        }
    }
    let summary = parts.join("; ");
    if exhausted.is_empty() {
        Finding::pass("quotas", summary)
    } else {
        Finding::fail(
            "quotas",
            format!(
                "{summary}: no room left in {} for the smallest sliver type or a link; \
                 raise them (`oneuser quota USER`) or free resources",
                exhausted.join(", ")
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_outside_5_10_to_7_are_refused() {
        let answer = |v: &str| server_version(Ok(Answer::Str(v.into())));
        assert!(answer("5.10.1").ok);
        assert!(answer("7.4.0").ok);
        assert!(!answer("5.8.0").ok);
        assert!(!answer("8.0.0").ok);
        assert!(!answer("junk").ok);
    }
}
