//! A node's `<services>`: `login`, `execute`, `install`, and the ssh-user
//! (`services_user` with `public_key`s) and jFed proxy extensions inside it.

use super::{append_core, children_named, element_view, ns};
use crate::tree::{Document, NodeId};

element_view! {
    /// Read view of `<services>`.
    Services {}
}

impl<'a> Services<'a> {
    /// Every `<login>`.
    pub fn logins(&self) -> impl Iterator<Item = Login<'a>> + use<'a> {
        let doc = self.doc;
        children_named(doc, self.id, "login").map(move |id| Login::new(doc, id))
    }

    /// Every `<execute>`.
    pub fn executes(&self) -> impl Iterator<Item = Execute<'a>> + use<'a> {
        let doc = self.doc;
        children_named(doc, self.id, "execute").map(move |id| Execute::new(doc, id))
    }

    /// Every `<install>`.
    pub fn installs(&self) -> impl Iterator<Item = Install<'a>> + use<'a> {
        let doc = self.doc;
        children_named(doc, self.id, "install").map(move |id| Install::new(doc, id))
    }

    /// Every ssh-user `<services_user>`.
    pub fn users(&self) -> impl Iterator<Item = ServicesUser<'a>> + use<'a> {
        let doc = self.doc;
        doc.elements_named(self.id, ns::SSH_USER, "services_user")
            .map(move |id| ServicesUser::new(doc, id))
    }

    /// Every jFed `<proxy>`.
    pub fn proxies(&self) -> impl Iterator<Item = Proxy<'a>> + use<'a> {
        let doc = self.doc;
        doc.elements_named(self.id, ns::PROXY, "proxy")
            .map(move |id| Proxy::new(doc, id))
    }
}

element_view! {
    /// Read view of `<login>`.
    Login {
        /// `authentication`, e.g. `ssh-keys`.
        authentication => "authentication",
        /// `hostname`.
        hostname => "hostname",
        /// `port` as written (22 when absent, by convention).
        port => "port",
        /// `username`.
        username => "username",
    }
}

element_view! {
    /// Read view of `<execute>`.
    Execute {
        /// `shell`, e.g. `sh`.
        shell => "shell",
        /// `command`.
        command => "command",
    }
}

element_view! {
    /// Read view of `<install>`.
    Install {
        /// `url` of the archive.
        url => "url",
        /// `install_path` it is unpacked into.
        install_path => "install_path",
    }
}

element_view! {
    /// Read view of an ssh-user `<services_user>`.
    ServicesUser {
        /// `login`: the account name.
        login => "login",
        /// `user_urn`: the GENI user the keys belong to.
        user_urn => "user_urn",
    }
}

impl ServicesUser<'_> {
    /// The text of every `<public_key>`, trimmed.
    pub fn public_keys(&self) -> Vec<String> {
        self.doc
            .elements_named(self.id, ns::SSH_USER, "public_key")
            .map(|id| self.doc.text(id).trim().to_owned())
            .collect()
    }
}

element_view! {
    /// Read view of a jFed `<proxy>`.
    Proxy {
        /// `proxy`: `user@gateway:port` to connect through.
        proxy => "proxy",
        /// `for`: `user@node:port` the proxy leads to.
        target => "for",
    }
}

/// Write view of `<services>`.
#[derive(Debug)]
pub struct ServicesMut<'a> {
    doc: &'a mut Document,
    id: NodeId,
}

impl<'a> ServicesMut<'a> {
    /// Edits element `id` of `doc`, which must be a `<services>`.
    pub fn new(doc: &'a mut Document, id: NodeId) -> Self {
        Self { doc, id }
    }

    /// Read access to the same element.
    pub fn as_view(&self) -> Services<'_> {
        Services::new(self.doc, self.id)
    }

    /// Appends `<login authentication=… hostname=… port=… username=…>`
    /// unless an identical login is already there.
    pub fn add_login(
        &mut self,
        authentication: &str,
        hostname: &str,
        port: u16,
        username: Option<&str>,
    ) {
        let port = port.to_string();
        let exists = self.as_view().logins().any(|l| {
            l.authentication().as_deref() == Some(authentication)
                && l.hostname().as_deref() == Some(hostname)
                && l.port().as_deref() == Some(port.as_str())
                && l.username().as_deref() == username
        });
        if exists {
            return;
        }
        let login = append_core(self.doc, self.id, "login");
        self.doc
            .set_attribute(login, "authentication", authentication);
        self.doc.set_attribute(login, "hostname", hostname);
        self.doc.set_attribute(login, "port", &port);
        if let Some(username) = username {
            self.doc.set_attribute(login, "username", username);
        }
    }

    /// Appends an ssh-user `<services_user login=… user_urn=…>` with one
    /// `<public_key>` per key.
    pub fn add_services_user(
        &mut self,
        login: &str,
        user_urn: Option<&str>,
        public_keys: &[String],
    ) {
        let user = self
            .doc
            .append_element(self.id, ns::SSH_USER, "ssh-user", "services_user");
        self.doc.set_attribute(user, "login", login);
        if let Some(urn) = user_urn {
            self.doc.set_attribute(user, "user_urn", urn);
        }
        for key in public_keys {
            let element = self
                .doc
                .append_element(user, ns::SSH_USER, "ssh-user", "public_key");
            self.doc.set_text(element, key);
        }
    }

    /// Appends a jFed `<proxy proxy=… for=…>`.
    pub fn add_proxy(&mut self, proxy: &str, target: &str) {
        let element = self
            .doc
            .append_element(self.id, ns::PROXY, "proxy", "proxy");
        self.doc.set_attribute(element, "proxy", proxy);
        self.doc.set_attribute(element, "for", target);
    }
}
