//! The value of a HOT output: `get_attr` of a server's addresses
//! (`first_address`, `networks`, `addresses`, `accessIPv4`), of a port's
//! `fixed_ips` or a floating IP's `floating_ip_address` becomes an
//! address the manifest reports (a floating IP's is its server's control
//! address); `get_param`, `str_replace`, `list_join` and literals become
//! literal text. What the aggregate cannot know (console URLs, volume
//! ids) is kept as a literal saying it is unavailable.

use super::functions::{Val, eval, is_function};
use super::servers::Built;
use super::{Ctx, Kind};
use crate::OutputValue;
use crate::yaml::{Problems, Yaml};

const SERVER_ADDRESSES: &[&str] = &["first_address", "networks", "addresses", "accessIPv4"];

/// The value of one output expression.
pub(crate) fn value(
    expr: &Yaml,
    ctx: &Ctx<'_>,
    built: &Built,
    problems: &mut Problems,
) -> OutputValue {
    let unavailable =
        |what: String| OutputValue::Literal(format!("unavailable at this aggregate: {what}"));
    match expr.single_entry().filter(|(k, _)| is_function(k)) {
        Some(("get_attr", args)) => {
            let items: Vec<&str> = args.items().iter().filter_map(Yaml::as_str).collect();
            let (Some(name), Some(attr)) = (items.first().copied(), items.get(1).copied()) else {
                return unavailable(format!("get_attr of {}", args.describe()));
            };
            let Some(resource) = ctx.resource(name) else {
                if !ctx.names.iter().any(|n| n == name) {
                    problems.refuse(
                        expr.line,
                        format!("get_attr: the template has no resource '{name}'"),
                    );
                }
                return unavailable(format!("attribute {attr} of '{name}'"));
            };
            let address = |node: &str, interface: Option<String>| OutputValue::Address {
                node: node.to_owned(),
                interface,
            };
            match (resource.kind, attr) {
                (Kind::Server, a) if SERVER_ADDRESSES.contains(&a) => {
                    let on_net = items
                        .get(2)
                        .and_then(|net| built.on_net.get(&(name.to_owned(), (*net).to_owned())));
                    address(name, on_net.cloned())
                }
                (Kind::Port, "fixed_ips" | "ip_address") => match built.ports.get(name) {
                    Some((server, interface)) => address(server, interface.clone()),
                    None => unavailable(format!("attribute {attr} of '{name}'")),
                },
                (Kind::FloatingIp, "floating_ip_address") => {
                    let port = resource
                        .properties
                        .get("port_id")
                        .or_else(|| resource.properties.get("port"));
                    let mut scratch = Problems::default();
                    match port.map(|p| eval(p, ctx.params, &ctx.names, &mut scratch)) {
                        Some(Val::Resource(p)) => match built.ports.get(&p) {
                            Some((server, _)) => address(server, None),
                            None => unavailable(format!("attribute {attr} of '{name}'")),
                        },
                        _ => unavailable(format!("attribute {attr} of '{name}'")),
                    }
                }
                _ => unavailable(format!("attribute {attr} of '{name}'")),
            }
        }
        Some(_) => match eval(expr, ctx.params, &ctx.names, problems) {
            Val::Yaml(v) => match v.as_str() {
                Some(t) => OutputValue::Literal(t.to_owned()),
                None => unavailable(v.describe()),
            },
            Val::Unset => OutputValue::Literal(String::new()),
            Val::Resource(r) => unavailable(format!("the id of resource '{r}'")),
        },
        None => match expr.as_str() {
            Some(t) => OutputValue::Literal(t.to_owned()),
            None if expr.is_null() => OutputValue::Literal(String::new()),
            None => unavailable(format!(
                "{} that is no function this aggregate evaluates",
                expr.describe()
            )),
        },
    }
}
