//! Reading the fields of one `<credential>` element (and, recursively, its
//! `<parent>`) strictly: every known field at most once, the owner and
//! target identities taken from their certificates (`owner_urn` /
//! `target_urn` must agree when present), privileges with their
//! `can_delegate` flags, a lenient expiry. Unknown children (PG
//! `<extensions>`, `<uuid>`) are ignored. Nothing here checks signatures.

use super::SfaError;
use super::time::parse_expiry;
use crate::cert::{GeniCert, parse_chain};
use crate::parse_cache::ParseCache;
use crate::privilege::{Privilege, PrivilegeSet};
use crate::urn::Urn;
use crate::xmldsig::Node;
use base64::Engine;
use chrono::{DateTime, Utc};
use std::sync::Arc;

/// One credential element of a chain, as read (not yet verified).
#[derive(Debug, Clone)]
pub struct CredentialElement {
    /// Its ID (`xml:id`, or `id`), empty when it has none.
    pub id: String,
    /// `<type>` (`privilege` for SFA credentials).
    pub kind: String,
    /// The owner's certificate chain, leaf first.
    pub owner: Vec<GeniCert>,
    /// The owner's URN (from the owner certificate).
    pub owner_urn: Urn,
    /// The target's certificate chain, leaf first.
    pub target: Vec<GeniCert>,
    /// The target's URN (from the target certificate).
    pub target_urn: Urn,
    /// `<expires>`.
    pub expires: DateTime<Utc>,
    /// `<privileges>`, as written (`*` not expanded).
    pub privileges: PrivilegeSet,
}

/// The `<credential>` elements of the chain, from the top (the one
/// presented) down to the undelegated root: each `parent/credential`.
pub fn chain_nodes(top: Node<'_>) -> Result<Vec<Node<'_>>, SfaError> {
    let mut chain = vec![top];
    let mut current = top;
    loop {
        let mut parents = current.children_named(None, "parent");
        let Some(parent) = parents.next() else {
            return Ok(chain);
        };
        if let Some(second) = parents.next() {
            return Err(malformed(
                second,
                "<credential> holds a second <parent>".into(),
            ));
        }
        current = single_child(parent, "credential")?;
        chain.push(current);
    }
}

/// Reads the fields of one `<credential>` element.
pub fn read_credential(node: Node<'_>) -> Result<CredentialElement, SfaError> {
    Fields::collect(node)?.read(node)
}

/// The known children of a `<credential>`, each at most once.
#[derive(Default)]
struct Fields<'d> {
    kind: Option<Node<'d>>,
    owner_gid: Option<Node<'d>>,
    owner_urn: Option<Node<'d>>,
    target_gid: Option<Node<'d>>,
    target_urn: Option<Node<'d>>,
    expires: Option<Node<'d>>,
    privileges: Option<Node<'d>>,
}

impl<'d> Fields<'d> {
    fn collect(credential: Node<'d>) -> Result<Self, SfaError> {
        let mut fields = Self::default();
        for child in credential.children() {
            let slot = match (child.namespace(), child.name()) {
                (None, "type") => &mut fields.kind,
                (None, "owner_gid") => &mut fields.owner_gid,
                (None, "owner_urn") => &mut fields.owner_urn,
                (None, "target_gid") => &mut fields.target_gid,
                (None, "target_urn") => &mut fields.target_urn,
                (None, "expires") => &mut fields.expires,
                (None, "privileges") => &mut fields.privileges,
                _ => continue,
            };
            if slot.replace(child).is_some() {
                return Err(malformed(
                    child,
                    format!("<{}> appears twice in one <credential>", child.name()),
                ));
            }
        }
        Ok(fields)
    }

    fn read(self, node: Node<'d>) -> Result<CredentialElement, SfaError> {
        let id = node.ids().next().unwrap_or_default();
        let required = |field: Option<Node<'d>>, name: &str| {
            field.ok_or_else(|| malformed(node, format!("<credential> {id:?} has no <{name}>")))
        };
        let kind = required(self.kind, "type")?.text().trim().to_owned();
        let expires_node = required(self.expires, "expires")?;
        let expires_text = expires_node.text();
        let expires = parse_expiry(&expires_text).ok_or_else(|| {
            malformed(
                expires_node,
                format!("<expires> {:?} is not a date and time", expires_text.trim()),
            )
        })?;
        let (owner, owner_urn) = identity(required(self.owner_gid, "owner_gid")?, self.owner_urn)?;
        let (target, target_urn) =
            identity(required(self.target_gid, "target_gid")?, self.target_urn)?;
        let privileges = match self.privileges {
            Some(list) => privileges(list)?,
            None => PrivilegeSet::new(),
        };
        Ok(CredentialElement {
            id,
            kind,
            owner,
            owner_urn,
            target,
            target_urn,
            expires,
            privileges,
        })
    }
}

/// GIDs decoded so far (the same owners and targets recur in every link
/// and every call).
static DECODED: ParseCache<Arc<Vec<GeniCert>>> = ParseCache::new();

/// A GID (certificate chain) and the URN it names; a `*_urn` element, when
/// present, must name the same identity.
fn identity(gid: Node<'_>, urn: Option<Node<'_>>) -> Result<(Vec<GeniCert>, Urn), SfaError> {
    let text = gid.text();
    let bytes = if text.contains("-----BEGIN") {
        text.into_bytes()
    } else {
        // ProtoGENI writes bare base64 DER without PEM armour.
        let compact: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
        base64::engine::general_purpose::STANDARD
            .decode(compact)
            .map_err(|_| malformed(gid, format!("<{}> is neither PEM nor base64", gid.name())))?
    };
    let field = gid.name().to_owned();
    let gid_error = |source| SfaError::Gid {
        line: gid.line(),
        field: field.clone(),
        source: Box::new(source),
    };
    let chain = DECODED
        .get_or_parse(&bytes, |b| parse_chain(b).map(Arc::new))
        .map_err(gid_error)?;
    let chain = chain.to_vec();
    let leaf = chain
        .first()
        .ok_or_else(|| malformed(gid, format!("<{field}> is empty")))?;
    let cert_urn = leaf.require_urn().map_err(gid_error)?.clone();
    if let Some(urn_node) = urn {
        let written = urn_node.text();
        let agrees = Urn::parse(written.trim()).is_ok_and(|u| u.same_as(&cert_urn));
        if !agrees {
            return Err(malformed(
                urn_node,
                format!(
                    "<{}> {:?} differs from the URN {} in <{field}>",
                    urn_node.name(),
                    written.trim(),
                    cert_urn
                ),
            ));
        }
    }
    Ok((chain, cert_urn))
}

fn privileges(list: Node<'_>) -> Result<PrivilegeSet, SfaError> {
    list.children()
        .map(|p| {
            if !p.is(None, "privilege") {
                return Err(malformed(
                    p,
                    "only <privilege> is allowed in <privileges>".into(),
                ));
            }
            let name = single_child(p, "name")?.text().trim().to_owned();
            let can_delegate = match p.children_named(None, "can_delegate").next() {
                None => false,
                Some(flag) => match flag.text().trim() {
                    "1" | "true" => true,
                    "0" | "false" => false,
                    other => {
                        return Err(malformed(
                            flag,
                            format!("<can_delegate> {other:?} is not a boolean (true/false/1/0)"),
                        ));
                    }
                },
            };
            if name.is_empty() {
                return Err(malformed(p, "<privilege> has an empty <name>".into()));
            }
            Ok(Privilege::new(&name, can_delegate))
        })
        .collect()
}

/// The only child element named `name` of `parent`.
fn single_child<'d>(parent: Node<'d>, name: &str) -> Result<Node<'d>, SfaError> {
    let mut found = parent.children_named(None, name);
    let first = found
        .next()
        .ok_or_else(|| malformed(parent, format!("<{}> has no <{name}>", parent.name())))?;
    if let Some(second) = found.next() {
        return Err(malformed(
            second,
            format!("<{}> holds a second <{name}>", parent.name()),
        ));
    }
    Ok(first)
}

/// [`SfaError::Malformed`] at `node`.
pub(crate) fn malformed(node: Node<'_>, message: String) -> SfaError {
    SfaError::Malformed {
        line: node.line(),
        message,
    }
}
