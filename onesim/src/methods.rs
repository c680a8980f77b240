//! The XML-RPC methods: parameter checking in xmlrpc-c's order (session,
//! authentication, then each parameter's type and presence), and each method's
//! effect on the cloud with oned's reply texts.

use crate::cloud::inventory::Kind;
use crate::cloud::record::Pooled;
use crate::cloud::state::VmState;
use crate::cloud::{Cloud, seed};
use crate::docs;
use crate::refusal::Refusal;
use crate::template::{self, AttrValue, Template};
use crate::xml::Element;
use crate::xmlrpc::{Call, Payload, Reply, Value};

/// A parameter type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    S,
    I,
    B,
}

/// Signature: required parameters after the session, then optional ones.
struct Signature {
    required: &'static [Ty],
    optional: &'static [Ty],
}

const fn sig(required: &'static [Ty], optional: &'static [Ty]) -> Signature {
    Signature { required, optional }
}

use Ty::{B, I, S};

fn signature(cloud: &Cloud, method: &str) -> Option<Signature> {
    let v = cloud.version();
    Some(match method {
        "one.system.version"
        | "one.system.config"
        | "one.hostpool.info"
        | "one.datastorepool.info"
        | "one.clusterpool.info" => sig(&[], &[]),
        "one.user.info" | "one.vm.info" | "one.host.info" | "one.vn.info" => sig(&[I], &[B]),
        "one.template.info" => sig(&[I], &[B, B]),
        "one.templatepool.info" | "one.imagepool.info" | "one.vnpool.info" => sig(&[I, I, I], &[]),
        "one.template.instantiate" => sig(&[I, S], &[B, S, B]),
        "one.vm.allocate" => sig(&[S], &[B]),
        "one.vm.action" => sig(&[S, I], &[]),
        "one.vm.update" => sig(&[I, S], &[I]),
        "one.vm.updateconf" if v.updateconf_has_type() => sig(&[I, S], &[I]),
        "one.vm.updateconf" => sig(&[I, S], &[]),
        "one.vm.recover" => sig(&[I, I], &[]),
        "one.vmpool.info" => sig(&[I, I, I, I], &[S]),
        "one.vmpool.infoextended" if v.has_infoextended() => sig(&[I, I, I, I], &[S]),
        "one.vmpool.infoset" if v.has_infoset() => sig(&[S, B], &[]),
        "one.vn.reserve" => sig(&[I, S], &[]),
        "one.vn.allocate" => sig(&[S], &[I]),
        "one.vn.delete" | "one.host.delete" => sig(&[I], &[]),
        "one.host.allocate" => sig(&[S, S, S], &[I]),
        _ => return None,
    })
}

fn fault_type(ty: Ty) -> Reply {
    let name = match ty {
        S => "string",
        I => "integer",
        B => "boolean",
    };
    Reply::Fault {
        code: -501,
        text: format!("Parameter that is supposed to be {name} is not"),
    }
}

fn not_enough() -> Reply {
    Reply::Fault {
        code: -501,
        text: "Not enough parameters".into(),
    }
}

fn type_matches(value: &Value, ty: Ty) -> bool {
    matches!(
        (value, ty),
        (Value::Str(_), S) | (Value::Int(_), I) | (Value::Bool(_), B)
    )
}

/// Typed access to the checked parameters (after the session).
struct Params<'a>(&'a [Value]);

impl Params<'_> {
    fn int(&self, i: usize) -> i32 {
        match self.0.get(i) {
            Some(Value::Int(v)) => *v,
            _ => -1,
        }
    }
    fn str(&self, i: usize) -> &str {
        match self.0.get(i) {
            Some(Value::Str(v)) => v,
            _ => "",
        }
    }
    fn bool(&self, i: usize) -> bool {
        matches!(self.0.get(i), Some(Value::Bool(true)))
    }
    fn has(&self, i: usize) -> bool {
        self.0.len() > i
    }
}

/// Answers one call.
pub fn dispatch(cloud: &mut Cloud, call: &Call) -> Reply {
    cloud.record_call(&call.method);
    let Some(signature) = signature(cloud, &call.method) else {
        return Reply::Fault {
            code: -506,
            text: format!("Method '{}' not defined", call.method),
        };
    };
    let Some(session) = call.params.first() else {
        return not_enough();
    };
    let Value::Str(session) = session else {
        return fault_type(S);
    };
    let method = call.method.as_str();
    if cloud.inventory().authenticate(session).is_none() {
        return failure(
            method,
            Refusal::new(
                Refusal::AUTHENTICATION,
                "User couldn't be authenticated, aborting call.",
            ),
        );
    }
    let params = &call.params[1..];
    // xmlrpc-c reads the parameters in order: a missing one or a wrong type stops at the first.
    let mut wanted: Vec<Ty> = signature.required.to_vec();
    let optional_read = if method == "one.template.instantiate" && params.len() > 2 {
        // Before 7.2 the handler reads hold and extra_template together once a 4th parameter is present.
        if cloud.version().instantiate_takes_four() {
            params.len() - 2
        } else {
            params.len().max(4) - 2
        }
    } else {
        params.len().saturating_sub(wanted.len())
    };
    wanted.extend(signature.optional.iter().take(optional_read));
    for (i, ty) in wanted.iter().enumerate() {
        match params.get(i) {
            None => return not_enough(),
            Some(value) if !type_matches(value, *ty) => return fault_type(*ty),
            Some(_) => {}
        }
    }
    cloud.advance();
    match run(cloud, method, &Params(params)) {
        Ok(payload) => Reply::Success(payload),
        Err(refusal) => failure(method, refusal),
    }
}

fn failure(method: &str, refusal: Refusal) -> Reply {
    Reply::Failure {
        message: format!("[{method}] {}", refusal.message),
        code: refusal.code,
        resp_id: refusal.resp_id,
    }
}

fn doc(element: Element) -> Payload {
    Payload::Str(element.to_xml())
}

fn parse_template(text: &str) -> Result<Template, Refusal> {
    template::parse(text).map_err(|e| Refusal::new(Refusal::INTERNAL, e))
}

fn run(cloud: &mut Cloud, method: &str, p: &Params<'_>) -> Result<Payload, Refusal> {
    match method {
        "one.system.version" => Ok(Payload::Str(cloud.version().to_string())),
        "one.system.config" => Ok(Payload::Str(seed::CONFIG.to_owned())),
        "one.datastorepool.info" => Ok(Payload::Str(seed::DATASTORE_POOL.to_owned())),
        "one.clusterpool.info" => Ok(doc(docs::cluster_pool(cloud))),
        "one.user.info" => match p.int(0) {
            -1 | 0 => Ok(doc(crate::versions::adapt_user(
                cloud.version(),
                cloud.inventory().user().clone(),
            ))),
            id => Err(Refusal::no_such("user", id)),
        },
        "one.template.info" => {
            let id = p.int(0);
            let found = cloud.inventory().template(id).cloned();
            found
                .map(doc)
                .ok_or_else(|| Refusal::no_such("virtual machine template", id))
        }
        "one.templatepool.info" | "one.imagepool.info" => {
            check_pool_filter(p.int(0))?;
            let (root, kind) = if method == "one.imagepool.info" {
                ("IMAGE_POOL", Kind::Image)
            } else {
                ("VMTEMPLATE_POOL", Kind::Template)
            };
            let items = cloud.inventory().documents(kind).to_vec();
            Ok(doc(docs::pool(root, items)))
        }
        "one.template.instantiate" => instantiate(cloud, p),
        "one.vm.allocate" => {
            let text = p.str(0);
            cloud.record_template(text);
            let template = parse_template(text)?;
            cloud.create_vm(template, p.bool(1), None).map(Payload::Int)
        }
        "one.vm.info" => {
            let id = p.int(0);
            let vm = cloud
                .vm(id)
                .ok_or_else(|| Refusal::no_such("virtual machine", id))?;
            Ok(doc(docs::vm_full(cloud, vm, true)))
        }
        "one.vm.action" => cloud
            .action(p.str(0), p.int(1))
            .map(|()| Payload::Int(p.int(1))),
        "one.vm.update" => update(cloud, p),
        "one.vm.updateconf" => updateconf(cloud, p),
        "one.vm.recover" => recover(cloud, p.int(0), p.int(1)),
        "one.vmpool.info" | "one.vmpool.infoextended" => {
            vm_pool(cloud, p, method == "one.vmpool.infoextended")
        }
        "one.vmpool.infoset" => Ok(doc(vm_set(cloud, p.str(0), p.bool(1)))),
        "one.hostpool.info" => {
            let items = (0..cloud.inventory().hosts().len())
                .filter_map(|i| docs::host(cloud, i, false))
                .collect();
            Ok(doc(docs::pool("HOST_POOL", items)))
        }
        "one.host.info" => {
            let id = p.int(0);
            let index = host_index(cloud, id)?;
            docs::host(cloud, index, true)
                .map(doc)
                .ok_or_else(|| Refusal::no_such("host", id))
        }
        "one.host.allocate" => host_allocate(cloud, p),
        "one.host.delete" => host_delete(cloud, p.int(0)),
        "one.vnpool.info" => {
            check_pool_filter(p.int(0))?;
            let vnets = cloud.inventory().vnets().iter().rev();
            let items = vnets.map(|v| docs::vnet(cloud, v, true)).collect();
            Ok(doc(docs::pool("VNET_POOL", items)))
        }
        "one.vn.info" => {
            let id = p.int(0);
            let vnet = cloud
                .inventory()
                .vnet(id)
                .ok_or_else(|| Refusal::no_such("virtual network", id))?;
            Ok(doc(docs::vnet(cloud, vnet, false)))
        }
        "one.vn.allocate" => crate::networks::allocate(cloud, p.str(0)).map(Payload::Int),
        "one.vn.reserve" => crate::networks::reserve(cloud, p.int(0), p.str(1)).map(Payload::Int),
        "one.vn.delete" => crate::networks::delete(cloud, p.int(0)).map(Payload::Int),
        _ => Err(Refusal::new(
            Refusal::INTERNAL,
            format!("{method} is not simulated"),
        )),
    }
}

fn host_index(cloud: &Cloud, id: i32) -> Result<usize, Refusal> {
    cloud
        .inventory()
        .host_index(id)
        .ok_or_else(|| Refusal::no_such("host", id))
}

fn check_pool_filter(filter: i32) -> Result<(), Refusal> {
    if filter < -4 {
        Err(Refusal::new(Refusal::XML_RPC_API, "Incorrect filter_flag"))
    } else {
        Ok(())
    }
}

fn instantiate(cloud: &mut Cloud, p: &Params<'_>) -> Result<Payload, Refusal> {
    let id = p.int(0);
    let base = cloud.inventory().template(id).cloned();
    let base = base.ok_or_else(|| Refusal::no_such("virtual machine template", id))?;
    let extra_text = if p.has(3) { p.str(3) } else { "" };
    cloud.record_template(extra_text);
    let extra = parse_template(extra_text)?;
    let mut merged = Template::from_elements(base.child("TEMPLATE").map_or(&[], Element::children));
    merged.merge_replacing(&extra);
    let name = p.str(1);
    if !name.is_empty() {
        merged.set("NAME", name);
    } else {
        merged.take("NAME");
    }
    let hold = p.has(2) && p.bool(2);
    cloud
        .create_vm(merged, hold, Some(id))
        .map(Payload::Int)
        .map_err(|mut r| {
            if r.code == Refusal::ALLOCATE {
                r.message = r
                    .message
                    .replace("a new virtual machine.", "a new virtual machine template.");
            }
            r
        })
}

/// `one.vm.recover`: operation 3 (delete) terminates hard; the others are accepted.
fn recover(cloud: &mut Cloud, id: i32, operation: i32) -> Result<Payload, Refusal> {
    if cloud.vm(id).is_none() {
        return Err(Refusal::no_such("virtual machine", id));
    }
    match operation {
        3 => cloud
            .action("terminate-hard", id)
            .map(|()| Payload::Int(id)),
        0..=5 => Ok(Payload::Int(id)),
        _ => Err(Refusal::new(
            Refusal::XML_RPC_API,
            "Wrong recovery operation code",
        )),
    }
}

fn update(cloud: &mut Cloud, p: &Params<'_>) -> Result<Payload, Refusal> {
    let id = p.int(0);
    let mode = if p.has(2) { p.int(2) } else { 0 };
    if mode != 0 && mode != 1 {
        return Err(Refusal::new(Refusal::XML_RPC_API, "Wrong update type"));
    }
    let text = p.str(1);
    cloud.record_template(text);
    let vm = cloud
        .vm_mut(id)
        .ok_or_else(|| Refusal::no_such("virtual machine", id))?;
    let sent = parse_template(text)?;
    if mode == 1 {
        vm.user_template_mut().merge_replacing(&sent);
    } else {
        *vm.user_template_mut() = sent;
    }
    Ok(Payload::Int(id))
}

const UPDATECONF_SECTIONS: [&str; 9] = [
    "OS",
    "CPU_MODEL",
    "FEATURES",
    "INPUT",
    "GRAPHICS",
    "VIDEO",
    "RAW",
    "CONTEXT",
    "BACKUP_CONFIG",
];

fn updateconf(cloud: &mut Cloud, p: &Params<'_>) -> Result<Payload, Refusal> {
    let id = p.int(0);
    let merge = p.has(2) && p.int(2) == 1;
    let text = p.str(1);
    cloud.record_template(text);
    let vm = cloud
        .vm_mut(id)
        .ok_or_else(|| Refusal::no_such("virtual machine", id))?;
    let sent = parse_template(text)?;
    let template = vm.template_mut();
    for attr in sent
        .attrs
        .iter()
        .filter(|a| UPDATECONF_SECTIONS.contains(&a.name.as_str()))
    {
        let AttrValue::Vector(members) = &attr.value else {
            continue;
        };
        let mut members = members.clone();
        if merge {
            if let Some(old) = template.vectors(&attr.name).next() {
                for (k, v) in old {
                    if !members.iter().any(|(n, _)| n == k) {
                        members.push((k.clone(), v.clone()));
                    }
                }
            }
        } else if attr.name == "CONTEXT" {
            // Generated context entries (ETH*, DISK_ID, TARGET) survive a replace.
            if let Some(old) = template.vectors("CONTEXT").next() {
                for (k, v) in old
                    .iter()
                    .filter(|(k, _)| k.starts_with("ETH") || k == "DISK_ID" || k == "TARGET")
                {
                    if !members.iter().any(|(n, _)| n == k) {
                        members.push((k.clone(), v.clone()));
                    }
                }
            }
        }
        template.take(&attr.name);
        template.attrs.push(template::Attr {
            name: attr.name.clone(),
            value: AttrValue::Vector(members),
        });
    }
    Ok(Payload::Int(id))
}

fn vm_pool(cloud: &Cloud, p: &Params<'_>, extended: bool) -> Result<Payload, Refusal> {
    let (filter, start, end, state_filter) = (p.int(0), p.int(1), p.int(2), p.int(3));
    check_pool_filter(filter)?;
    if !(-2..=11).contains(&state_filter) {
        return Err(Refusal::new(
            Refusal::XML_RPC_API,
            "Incorrect filter_flag, state",
        ));
    }
    let owned_by_caller = filter <= 0;
    let wanted = VmState::from_number(state_filter);
    let mut vms: Vec<_> = cloud
        .engine()
        .vms()
        .values()
        .rev()
        .filter(|_| owned_by_caller)
        .filter(|vm| match state_filter {
            -2 => true,
            -1 => vm.state() != VmState::Done,
            _ => Some(vm.state()) == wanted,
        })
        .filter(|vm| end < -1 || ((start < 0 || vm.id() >= start) && (end < 0 || vm.id() <= end)))
        .collect();
    if end < -1 {
        let offset = usize::try_from(start.max(0)).unwrap_or(0);
        let size = usize::try_from(-end).unwrap_or(0);
        vms = vms.into_iter().skip(offset).take(size).collect();
    }
    let items = vms
        .into_iter()
        .map(|vm| {
            if extended {
                docs::vm_full(cloud, vm, false)
            } else if cloud.version().reduced_vm_pool() {
                docs::vm_reduced(cloud, vm)
            } else {
                docs::vm_full(cloud, vm, false)
            }
        })
        .collect();
    Ok(doc(docs::pool("VM_POOL", items)))
}

/// `one.vmpool.infoset`: the VMs of a comma-separated id list, newest first.
fn vm_set(cloud: &Cloud, ids: &str, extended: bool) -> Element {
    let ids: Vec<i32> = ids
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let items = cloud
        .engine()
        .vms()
        .values()
        .rev()
        .filter(|vm| ids.contains(&vm.id()))
        .map(|vm| {
            if extended {
                docs::vm_full(cloud, vm, false)
            } else {
                docs::vm_reduced(cloud, vm)
            }
        })
        .collect();
    docs::pool("VM_POOL", items)
}

fn host_allocate(cloud: &mut Cloud, p: &Params<'_>) -> Result<Payload, Refusal> {
    let name = p.str(0);
    let hosts = cloud.inventory().hosts();
    if let Some(existing) = hosts.iter().find(|h| h.name() == name) {
        return Err(Refusal::new(
            Refusal::ALLOCATE,
            format!(
                "Error allocating a new host. NAME is already taken by HOST {}.",
                existing.id()
            ),
        ));
    }
    let (im_mad, vm_mad) = (p.str(1), p.str(2));
    let id = cloud
        .inventory_mut()
        .add_host(|id| crate::networks::new_host_document(id, name, im_mad, vm_mad));
    Ok(Payload::Int(id))
}

/// `one.host.delete`: refused while VMs occupy the host.
fn host_delete(cloud: &mut Cloud, id: i32) -> Result<Payload, Refusal> {
    let index = host_index(cloud, id)?;
    if !cloud.host_usage(index).2.is_empty() {
        return Err(Refusal::new(
            Refusal::ACTION,
            "Cannot delete host. Can not remove a host with running VMs",
        ));
    }
    cloud.inventory_mut().remove_host(index);
    Ok(Payload::Int(id))
}
