//! The CONTEXT a VM boots with (the OpenNebula Virtual Machine Template reference, "Context Section"): the
//! template's own CONTEXT, resent whole and in order (the extra template
//! replaces top-level attributes, so a partial CONTEXT would drop the
//! site's `NETWORK = "YES"` and the like), with the aggregate's keys set in
//! place or appended:
//!
//! * `USERNAME`: the first login that can be a Unix account, each user's
//!   login derived from the URN by the rule the manifest's logins follow
//!   ([`login_name`]);
//! * `SSH_PUBLIC_KEY`: the keys of the users of that login only, newline-
//!   joined (the guest's contextualization installs them on `USERNAME`,
//!   so another user's key there would open someone else's account);
//! * `SET_HOSTNAME`: a DNS label from the `client_id`;
//! * `START_SCRIPT_BASE64`: a script giving every login its own users'
//!   keys, unpacking each `<install>` and running each `<execute>`;
//! * `GENI_SLIVER_BASE64`: the record the CONTEXT was built from, so a key
//!   update can rebuild it.
//!
//! CONTEXT values are `$`-expanded by oned, so untrusted text reaches it
//! only through base64 or after being reduced to safe characters: a key
//! holding `$` (or a newline) is left out of `SSH_PUBLIC_KEY` and installed
//! by the start script alone. Template-side values (the site's
//! `$USER[…]`, `$NAME`) are resent verbatim.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use geni_am_backend::naming::login_name;
use geni_am_backend::{UserKeys, VmSpec};
use serde::{Deserialize, Serialize};

/// The CONTEXT key holding the record a CONTEXT was built from.
pub const RECORD_KEY: &str = "GENI_SLIVER_BASE64";

/// What the aggregate adds to a VM's CONTEXT; kept in the CONTEXT itself
/// (as JSON in base64) so the users can be replaced later.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SliverContext {
    /// The template the VM was instantiated from (its CONTEXT is the base).
    pub template_id: i32,
    /// The VM's host name (a DNS label).
    pub hostname: String,
    /// The link networks the VM's NICs after the template's are on, in order.
    #[serde(default)]
    pub networks: Vec<String>,
    /// The slice users and their keys; the first logs in as `USERNAME`.
    pub users: Vec<ContextUser>,
    /// Archives to unpack at first boot.
    pub install: Vec<ContextInstall>,
    /// Commands run at every boot, after the installs.
    pub execute: Vec<ContextExecute>,
}

/// One user of a [`SliverContext`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextUser {
    /// The user's URN.
    pub urn: String,
    /// The user's OpenSSH public keys.
    pub keys: Vec<String>,
}

/// One `<install>` of a [`SliverContext`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextInstall {
    /// The archive's URL.
    pub url: String,
    /// The directory it is unpacked into.
    pub path: String,
}

/// One `<execute>` of a [`SliverContext`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextExecute {
    /// The shell (`sh`, `bash`).
    pub shell: String,
    /// The command line.
    pub command: String,
}

impl SliverContext {
    /// The record for a new VM named `client_id`.
    pub fn new(template_id: i32, spec: &VmSpec) -> SliverContext {
        SliverContext {
            template_id,
            hostname: geni_am_backend::host_label(&spec.name, 63),
            networks: spec.networks.iter().map(|n| n.network.0.clone()).collect(),
            users: Vec::new(),
            install: spec
                .install
                .iter()
                .map(|i| ContextInstall {
                    url: i.url.clone(),
                    path: i.install_path.clone(),
                })
                .collect(),
            execute: spec
                .execute
                .iter()
                .map(|e| ContextExecute {
                    shell: e.shell.clone(),
                    command: e.command.clone(),
                })
                .collect(),
        }
        .with_users(&spec.users)
    }

    /// Replaces the key sets of the users listed in `users` and adds the
    /// new ones; users not listed keep theirs.
    pub fn with_users(mut self, users: &[UserKeys]) -> SliverContext {
        for user in users {
            let keys = user.keys.clone();
            match self.users.iter_mut().find(|u| u.urn == user.urn) {
                Some(known) => known.keys = keys,
                None => self.users.push(ContextUser {
                    urn: user.urn.clone(),
                    keys,
                }),
            }
        }
        self
    }

    /// Reads the record back from a VM's CONTEXT entries.
    pub fn from_context(entries: &[(String, String)]) -> Option<SliverContext> {
        let (_, encoded) = entries.iter().find(|(key, _)| key == RECORD_KEY)?;
        let json = BASE64.decode(encoded.trim()).ok()?;
        serde_json::from_slice(&json).ok()
    }

    /// The full CONTEXT: the template's entries in order, the aggregate's
    /// keys replacing same-named ones in place, the rest appended.
    pub fn merge(&self, template_context: &[(String, String)]) -> Vec<(String, String)> {
        let mut additions = self.additions();
        let mut merged: Vec<(String, String)> = template_context
            .iter()
            .filter(|(_, value)| !value.is_empty())
            .map(
                |(key, value)| match additions.iter().position(|(added, _)| added == key) {
                    Some(i) => additions.remove(i),
                    None => (key.clone(), value.clone()),
                },
            )
            .collect();
        merged.extend(additions);
        merged
    }

    /// The keys the aggregate sets, in a fixed order.
    fn additions(&self) -> Vec<(String, String)> {
        let logins = self.logins();
        let mut additions = Vec::new();
        if let Some((first, keys)) = logins.iter().find(|(login, _)| valid_login(login)) {
            let direct_keys: Vec<&str> = keys.iter().copied().filter(|k| context_safe(k)).collect();
            if !direct_keys.is_empty() {
                additions.push(("SSH_PUBLIC_KEY".to_owned(), direct_keys.join("\n")));
            }
            additions.push(("USERNAME".to_owned(), first.clone()));
        }
        additions.push(("SET_HOSTNAME".to_owned(), self.hostname.clone()));
        additions.push((
            "START_SCRIPT_BASE64".to_owned(),
            BASE64.encode(self.start_script(&logins)),
        ));
        let record = serde_json::to_vec(self).unwrap_or_default();
        additions.push((RECORD_KEY.to_owned(), BASE64.encode(record)));
        additions
    }

    /// The accounts to create, in order of first appearance: the login the
    /// manifest advertises for each user ([`login_name`]) with the keys of
    /// every user that maps to it.
    fn logins(&self) -> Vec<(String, Vec<&str>)> {
        let mut logins: Vec<(String, Vec<&str>)> = Vec::new();
        for user in &self.users {
            let login = login_name(&user.urn);
            let keys = user.keys.iter().map(|k| k.trim());
            match logins.iter_mut().find(|(known, _)| *known == login) {
                Some((_, known_keys)) => known_keys.extend(keys),
                None => logins.push((login, keys.collect())),
            }
        }
        logins
    }

    /// The start script: idempotent (context runs it at every boot), every
    /// untrusted string decoded from base64 at run time.
    fn start_script(&self, logins: &[(String, Vec<&str>)]) -> String {
        let mut script = String::from(START_SCRIPT_HEAD);
        for (login, keys) in logins {
            script.push_str(&format!(
                "geni_user {login} {}\n",
                BASE64.encode(keys.join("\n"))
            ));
        }
        for (n, install) in self.install.iter().enumerate() {
            script.push_str(&format!(
                "geni_install {n} {} {}\n",
                BASE64.encode(&install.url),
                BASE64.encode(&install.path)
            ));
        }
        for execute in &self.execute {
            script.push_str(&format!(
                "geni_execute {} {}\n",
                BASE64.encode(&execute.shell),
                BASE64.encode(&execute.command)
            ));
        }
        script
    }
}

/// The script's functions; the calls after it pass only login names
/// (`[a-z0-9_-]`, those not starting with a letter or `_` skipped),
/// numbers and base64 text.
const START_SCRIPT_HEAD: &str = r#"#!/bin/sh
# Written by the GENI aggregate: adds the slice users, unpacks the
# requested archives once and runs the requested commands at each boot.
unb64() { printf '%s' "$1" | base64 -d; }
geni_user() {
    case "$1" in [a-z_]*) ;; *) return ;; esac
    id "$1" >/dev/null 2>&1 || useradd -m -s /bin/bash -- "$1" || return
    home=$(getent passwd "$1" | cut -d: -f6)
    mkdir -p "$home/.ssh"
    unb64 "$2" > "$home/.ssh/authorized_keys"
    chmod 700 "$home/.ssh"; chmod 600 "$home/.ssh/authorized_keys"
    chown -R "$1:" "$home/.ssh"
    if [ -d /etc/sudoers.d ]; then
        echo "$1 ALL=(ALL) NOPASSWD:ALL" > "/etc/sudoers.d/geni-$1"
        chmod 440 "/etc/sudoers.d/geni-$1"
    fi
}
geni_install() {
    mark="/var/lib/geni-am/install-$1"
    [ -e "$mark" ] && return
    url=$(unb64 "$2"); dir=$(unb64 "$3")
    mkdir -p "$dir" /var/lib/geni-am
    archive=$(mktemp)
    if command -v curl >/dev/null 2>&1; then curl -fsSL -o "$archive" "$url"
    else wget -q -O "$archive" "$url"; fi || { rm -f "$archive"; return; }
    case "$url" in
        *.zip) unzip -o -q "$archive" -d "$dir" ;;
        *) tar -xf "$archive" -C "$dir" ;;
    esac && touch "$mark"
    rm -f "$archive"
}
geni_execute() {
    shell=$(unb64 "$1"); command=$(unb64 "$2")
    "$shell" -c "$command" &
}
"#;

/// Whether `text` can go into a CONTEXT value verbatim: no `$` (expanded
/// by oned) and no line breaks (which would split a key list).
fn context_safe(text: &str) -> bool {
    !text.is_empty() && !text.contains(['$', '\n', '\r']) && !text.contains("]]>")
}

/// Whether `login` can be a Unix account name: `[a-z_][a-z0-9_-]*`, at
/// most 32 characters (the script skips other names too).
fn valid_login(login: &str) -> bool {
    login.len() <= 32
        && login.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && login
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use geni_am_backend::{ExecuteSpec, InstallSpec};

    fn spec(name: &str, users: &[UserKeys]) -> VmSpec {
        VmSpec {
            size: None,
            tag: "urn:publicid:IDN+am.example+sliver+1".into(),
            name: name.into(),
            host: None,
            sliver_type: "small".into(),
            disk_image: None,
            users: users.to_vec(),
            networks: Vec::new(),
            exclusive: false,
            install: Vec::new(),
            execute: Vec::new(),
        }
    }

    fn user(name: &str, keys: &[&str]) -> UserKeys {
        UserKeys {
            urn: format!("urn:publicid:IDN+ch.geni.net+user+{name}"),
            keys: keys.iter().map(|k| k.to_string()).collect(),
        }
    }

    fn template_context() -> Vec<(String, String)> {
        vec![
            ("NETWORK".into(), "YES".into()),
            ("SSH_PUBLIC_KEY".into(), "$USER[SSH_PUBLIC_KEY]".into()),
            ("TOKEN".into(), "YES".into()),
        ]
    }

    fn value<'a>(context: &'a [(String, String)], key: &str) -> &'a str {
        context
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .unwrap_or_else(|| panic!("{key} missing from {context:?}"))
    }

    fn script(context: &[(String, String)]) -> String {
        String::from_utf8(
            BASE64
                .decode(value(context, "START_SCRIPT_BASE64"))
                .unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn the_template_context_is_kept_in_order_and_the_keys_are_set() {
        let users = [
            user(
                "alice",
                &["ssh-ed25519 AAAA alice@a", "ssh-rsa BBBB alice@b"],
            ),
            user("bob", &["ssh-ed25519 CCCC bob"]),
        ];
        let record = SliverContext::new(0, &spec("Node_A", &users));
        let context = record.merge(&template_context());
        let keys: Vec<&str> = context.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "NETWORK",
                "SSH_PUBLIC_KEY",
                "TOKEN",
                "USERNAME",
                "SET_HOSTNAME",
                "START_SCRIPT_BASE64",
                RECORD_KEY
            ]
        );
        assert_eq!(
            value(&context, "SSH_PUBLIC_KEY"),
            "ssh-ed25519 AAAA alice@a\nssh-rsa BBBB alice@b",
            "only the keys of the USERNAME login"
        );
        assert_eq!(value(&context, "USERNAME"), "alice");
        assert_eq!(value(&context, "SET_HOSTNAME"), "node-a");
        let script = script(&context);
        let bob_keys = BASE64.encode("ssh-ed25519 CCCC bob");
        assert!(
            script.contains(&format!("geni_user bob {bob_keys}\n")),
            "{script}"
        );
        assert_eq!(SliverContext::from_context(&context), Some(record));
    }

    #[test]
    fn untrusted_text_reaches_the_context_only_as_base64_or_reduced() {
        let evil_key = "ssh-ed25519 AAAA $USER[PASSWORD]";
        let users = [UserKeys {
            urn: "urn:publicid:IDN+x+user+$(reboot)\"]]>".into(),
            keys: vec![evil_key.into(), "ssh-ed25519 GOOD ok".into()],
        }];
        let install = [InstallSpec {
            url: "http://x/$(rm -rf /)'\".tgz".into(),
            install_path: "/tmp/'; reboot; '".into(),
        }];
        let execute = [ExecuteSpec {
            shell: "sh".into(),
            command: "echo $HOME ]]> '\"; `reboot`".into(),
        }];
        let mut hostile = spec("a$b\n]]>", &users);
        hostile.install = install.to_vec();
        hostile.execute = execute.to_vec();
        let record = SliverContext::new(3, &hostile);
        let context = record.merge(&[]);
        for (key, value) in &context {
            if key != "SSH_PUBLIC_KEY" {
                assert!(!value.contains(['$', '\n', '"', '\'']), "{key}={value:?}");
            }
        }
        assert_eq!(value(&context, "SSH_PUBLIC_KEY"), "ssh-ed25519 GOOD ok");
        assert_eq!(value(&context, "USERNAME"), "__reboot_____");
        assert_eq!(value(&context, "SET_HOSTNAME"), "a-b");
        let script = script(&context);
        let body = script.strip_prefix(START_SCRIPT_HEAD).unwrap();
        assert!(!body.contains(['$', '\'', '"', '`', ';']), "{body}");
        assert!(body.contains(&BASE64.encode(format!("{evil_key}\nssh-ed25519 GOOD ok"))));
        assert!(body.contains(&BASE64.encode("echo $HOME ]]> '\"; `reboot`")));
    }

    #[test]
    fn listed_users_are_replaced_and_others_kept() {
        let record = SliverContext::new(
            0,
            &spec("n", &[user("alice", &["k1"]), user("bob", &["k2"])]),
        );
        let updated = record.with_users(&[user("bob", &["k3"]), user("carol", &["k4"])]);
        let keys: Vec<(&str, &[String])> = updated
            .users
            .iter()
            .map(|u| (u.urn.rsplit('+').next().unwrap(), u.keys.as_slice()))
            .collect();
        assert_eq!(
            keys,
            [
                ("alice", &["k1".to_owned()][..]),
                ("bob", &["k3".to_owned()][..]),
                ("carol", &["k4".to_owned()][..])
            ]
        );
    }

    #[test]
    fn each_login_gets_only_its_own_users_keys() {
        let users = [
            user("42", &["k0"]),
            user("alice", &["k1"]),
            user("bob", &["k2", "k3"]),
        ];
        let context = SliverContext::new(0, &spec("n", &users)).merge(&template_context());
        assert_eq!(
            value(&context, "USERNAME"),
            "alice",
            "the first account name"
        );
        assert_eq!(value(&context, "SSH_PUBLIC_KEY"), "k1");
        let script = script(&context);
        for (login, keys) in [("alice", "k1"), ("bob", "k2\nk3")] {
            let line = format!("geni_user {login} {}\n", BASE64.encode(keys));
            assert!(script.contains(&line), "{line} in {script}");
        }
        assert_eq!(script.matches("geni_user ").count(), 3, "{script}");
    }

    #[test]
    fn logins_follow_the_manifest_and_share_accounts() {
        let users = [
            user("Alice.Smith", &["k1"]),
            UserKeys {
                urn: "urn:publicid:IDN+other+user+alice.smith".into(),
                keys: vec!["k2".into()],
            },
            user("42", &["k3"]),
        ];
        let record = SliverContext::new(0, &spec("n", &users));
        assert_eq!(
            record.logins(),
            [
                ("alice_smith".to_owned(), vec!["k1", "k2"]),
                ("42".to_owned(), vec!["k3"])
            ]
        );
        assert_eq!(value(&record.merge(&[]), "USERNAME"), "alice_smith");
        let shared = record.merge(&[]);
        assert_eq!(
            value(&shared, "SSH_PUBLIC_KEY"),
            "k1\nk2",
            "one login, both users"
        );
        let odd = SliverContext::new(0, &spec("n", &users[2..]));
        assert!(
            odd.merge(&[])
                .iter()
                .all(|(k, _)| k != "USERNAME" && k != "SSH_PUBLIC_KEY"),
            "not an account name: its keys go to no other account"
        );
        assert_eq!(geni_am_backend::host_label("--", 63), "vm");
    }
}
