//! Property tests of the two OpenNebula parsers that read network bytes: the
//! XML-RPC reply decoder (`rpc::wire::decode_response`) and the `oned`
//! document parsers (`docs`). Starting from the recorded replies and
//! documents of oned 7.4.0 and pyone 5.4, random byte mutations,
//! truncations and duplicated or removed elements never panic; and a VM
//! document whose ids, states, NIC addresses and CONTEXT entries are
//! rewritten to random values, carried in a reply, reads back to exactly
//! those values.

use geni_am_opennebula::docs::parse_vm;
use geni_am_opennebula::rpc::client::DEFAULT_RESPONSE_LIMIT;
use geni_am_opennebula::rpc::wire::decode_response;
use geni_am_opennebula::rpc::{Answer, RpcError};
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// The recorded folders the inputs come from.
const FOLDERS: &[&str] = &["oned-7.4.0", "pyone-5.4", "pyone-5.4/rpc"];

/// The recorded `.xml` files of [`FOLDERS`] whose name passes `keep`.
fn recorded_files(keep: impl Fn(&str) -> bool) -> Vec<String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/opennebula/recorded");
    let mut texts = Vec::new();
    for folder in FOLDERS {
        let dir = root.join(folder);
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|entry| entry.expect("directory entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "xml"))
            .filter(|p| keep(&file_name(p)))
            .collect();
        paths.sort();
        texts.extend(paths.iter().map(|p| {
            std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        }));
    }
    texts
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Recorded `methodResponse` bodies: oned 7.4.0 replies and pyone's
/// recorded wire exchanges.
static REPLIES: LazyLock<Vec<String>> = LazyLock::new(|| {
    let replies: Vec<String> = recorded_files(|name| name.ends_with(".response.xml"))
        .into_iter()
        .chain(recorded_files(|name| name.starts_with("one.")))
        .filter(|text| text.contains("<methodResponse"))
        .collect();
    assert!(
        replies.len() > 50,
        "only {} recorded replies",
        replies.len()
    );
    replies
});

/// Recorded object documents: oned 7.4.0 payloads and pyone's fixtures.
static DOCUMENTS: LazyLock<Vec<String>> = LazyLock::new(|| {
    let documents = recorded_files(|name| {
        name.ends_with(".payload.xml")
            || (!name.contains(".request")
                && !name.contains(".response")
                && !name.starts_with("one."))
    });
    assert!(
        documents.len() > 30,
        "only {} recorded documents",
        documents.len()
    );
    documents
});

/// The recorded running VM the round trip rewrites.
static RUNNING_VM: LazyLock<String> = LazyLock::new(|| {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/opennebula/recorded/oned-7.4.0/vm.info-running.payload.xml");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
});

/// Feeds a text to every document parser, shared with the fuzz targets.
#[path = "../fuzz/src/oned.rs"]
mod every_parser;
use every_parser::parse_with_every_parser;

/// One damage done to a recorded text.
#[derive(Debug, Clone)]
enum Mutation {
    /// Overwrite the byte at (position modulo length).
    Overwrite(usize, u8),
    /// Insert a byte at (position modulo length + 1).
    Insert(usize, u8),
    /// Cut the text at (position modulo length + 1).
    Truncate(usize),
    /// Remove the n-th element (modulo the count of start tags).
    RemoveElement(usize),
    /// Repeat the n-th element right after itself.
    DuplicateElement(usize),
    /// Replace the n-th element's content with a random value.
    SetValue(usize, String),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Overwrite(at, byte)),
        (
            any::<usize>(),
            prop::sample::select(b"<>&/\"';[]!?-0 x\n".to_vec())
        )
            .prop_map(|(at, byte)| Mutation::Insert(at, byte)),
        any::<usize>().prop_map(Mutation::Truncate),
        any::<usize>().prop_map(Mutation::RemoveElement),
        any::<usize>().prop_map(Mutation::DuplicateElement),
        (any::<usize>(), random_value()).prop_map(|(n, value)| Mutation::SetValue(n, value)),
    ]
}

/// Values hostile to a number or text reader: huge, negative, empty,
/// markup characters, non-ASCII.
fn random_value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        Just("99999999999999999999999".to_string()),
        Just(String::new()),
        Just("&lt;&amp;&#0;&#x110000;&bogus;".to_string()),
        Just("<![CDATA[".to_string()),
        "\\PC{0,24}",
    ]
}

/// The byte range of the `n`-th (modulo count) element whose start tag is
/// `<NAME>` and whose end tag `</NAME>` follows it.
fn element_span(text: &[u8], n: usize) -> Option<(usize, usize, usize)> {
    let starts: Vec<usize> = (0..text.len().saturating_sub(1))
        .filter(|&i| text[i] == b'<' && text[i + 1].is_ascii_uppercase())
        .collect();
    if starts.is_empty() {
        return None;
    }
    let start = starts[n % starts.len()];
    let name_end = start + 1 + text[start + 1..].iter().position(|&b| b == b'>')?;
    let name = &text[start + 1..name_end];
    let closing = [b"</".as_slice(), name, b">"].concat();
    let content_end = name_end
        + text[name_end..]
            .windows(closing.len())
            .position(|w| w == closing.as_slice())?;
    Some((start, name_end + 1, content_end + closing.len()))
}

/// `text` with `mutation` applied.
fn mutate(text: &[u8], mutation: &Mutation) -> Vec<u8> {
    let mut bytes = text.to_vec();
    let len = bytes.len().max(1);
    match mutation {
        Mutation::Overwrite(at, byte) => {
            if !bytes.is_empty() {
                bytes[at % len] = *byte;
            }
        }
        Mutation::Insert(at, byte) => bytes.insert(at % (bytes.len() + 1), *byte),
        Mutation::Truncate(at) => bytes.truncate(at % (bytes.len() + 1)),
        Mutation::RemoveElement(n) => {
            if let Some((start, _, end)) = element_span(text, *n) {
                bytes.drain(start..end);
            }
        }
        Mutation::DuplicateElement(n) => {
            if let Some((start, _, end)) = element_span(text, *n) {
                let copy = text[start..end].to_vec();
                bytes.splice(end..end, copy);
            }
        }
        Mutation::SetValue(n, value) => {
            if let Some((_, content_start, end)) = element_span(text, *n) {
                let content_end = end
                    - text[..end]
                        .iter()
                        .rev()
                        .position(|&b| b == b'<')
                        .unwrap_or(0)
                    - 1;
                bytes.splice(content_start..content_end, value.bytes());
            }
        }
    }
    bytes
}

/// Recorded text `index` of `texts` with `mutations` applied in turn.
fn damage(texts: &[String], index: prop::sample::Index, mutations: &[Mutation]) -> Vec<u8> {
    let original = index.get(texts).as_bytes();
    mutations
        .iter()
        .fold(original.to_vec(), |text, m| mutate(&text, m))
}

/// Escapes text for XML character data.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A successful oned reply carrying `document` as element `[1]`.
fn success_reply(document: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<methodResponse><params><param><value>\
         <array><data><value><boolean>1</boolean></value><value><string>{}</string></value>\
         <value><i4>0</i4></value></data></array></value></param></params></methodResponse>\n",
        escape(document)
    )
}

/// `xml` with the content of the first element `<name>` found after
/// `after` (a unique marker) replaced by `content`.
fn replace_content(xml: &str, after: &str, name: &str, content: &str) -> String {
    let base = xml
        .find(after)
        .unwrap_or_else(|| panic!("no {after} in the document"));
    let open = format!("<{name}>");
    let close = format!("</{name}>");
    let start = base
        + xml[base..]
            .find(&open)
            .unwrap_or_else(|| panic!("no {open}"))
        + open.len();
    let end = start
        + xml[start..]
            .find(&close)
            .unwrap_or_else(|| panic!("no {close}"));
    format!("{}{content}{}", &xml[..start], &xml[end..])
}

/// A value as a document writes it: escaped text or a CDATA section.
fn written(value: &str, as_cdata: bool) -> String {
    if as_cdata {
        format!("<![CDATA[{value}]]>")
    } else {
        escape(value)
    }
}

/// Safe attribute values: not blank, with markup characters that need
/// escaping, never `]]>`.
fn safe_text() -> impl Strategy<Value = String> {
    "[A-Za-z0-9._:/@-][A-Za-z0-9 ._:/@<>&'\"-]{0,30}"
}

/// The values the round trip writes into the recorded VM.
#[derive(Debug, Clone)]
struct VmValues {
    id: i64,
    state: i64,
    lcm_state: i64,
    ip: String,
    mac: String,
    context: Vec<(String, String)>,
    as_cdata: bool,
}

fn vm_values() -> impl Strategy<Value = VmValues> {
    (
        0..i64::MAX,
        0i64..12,
        0i64..80,
        (any::<[u8; 4]>()).prop_map(|o| format!("{}.{}.{}.{}", o[0], o[1], o[2], o[3])),
        (any::<[u8; 6]>()).prop_map(|m| {
            m.iter()
                .map(|b| format!("{b:02x}"))
                .collect::<Vec<_>>()
                .join(":")
        }),
        prop::collection::btree_map("[A-Z][A-Z0-9_]{0,15}", safe_text(), 0..8),
        any::<bool>(),
    )
        .prop_map(
            |(id, state, lcm_state, ip, mac, context, as_cdata)| VmValues {
                id,
                state,
                lcm_state,
                ip,
                mac,
                context: context.into_iter().collect(),
                as_cdata,
            },
        )
}

/// The recorded running VM with `values` written in.
fn rewrite_vm(values: &VmValues) -> String {
    let mut xml = RUNNING_VM.clone();
    xml = replace_content(&xml, "<VM>", "ID", &values.id.to_string());
    xml = replace_content(&xml, "<VM>", "STATE", &values.state.to_string());
    xml = replace_content(&xml, "<VM>", "LCM_STATE", &values.lcm_state.to_string());
    xml = replace_content(&xml, "<NIC>", "IP", &written(&values.ip, values.as_cdata));
    xml = replace_content(&xml, "<NIC>", "MAC", &written(&values.mac, values.as_cdata));
    let context: String = values
        .context
        .iter()
        .map(|(key, value)| format!("<{key}>{}</{key}>", written(value, values.as_cdata)))
        .collect();
    replace_content(&xml, "<TEMPLATE>", "CONTEXT", &context)
}

/// Root elements the document parsers read.
const PARSED_ROOTS: [&str; 12] = [
    "VM",
    "VM_POOL",
    "HOST",
    "HOST_POOL",
    "IMAGE",
    "IMAGE_POOL",
    "VMTEMPLATE",
    "VMTEMPLATE_POOL",
    "USER",
    "USER_POOL",
    "VNET",
    "VNET_POOL",
];

/// The name of the first element of `xml`, after any declaration,
/// processing instruction or comment.
fn root_name(xml: &str) -> &str {
    let mut rest = xml;
    loop {
        rest = &rest[rest.find('<').unwrap_or(rest.len())..];
        if rest.starts_with("<?") || rest.starts_with("<!") {
            rest = &rest[rest.find('>').map_or(rest.len(), |end| end + 1)..];
            continue;
        }
        let name = rest.get(1..).unwrap_or("");
        let end = name
            .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
            .unwrap_or(name.len());
        return &name[..end];
    }
}

/// The undamaged inputs: every recorded reply is an answer, a refusal or a
/// fault, and every recorded document with a parsed root is taken by
/// exactly one parser (the others by none).
#[test]
fn recorded_inputs_are_understood() {
    for reply in REPLIES.iter() {
        let answer = decode_response("one.test", reply.as_bytes(), DEFAULT_RESPONSE_LIMIT);
        assert!(
            !matches!(answer, Err(RpcError::Transport { .. })),
            "a recorded reply is not understood: {answer:?}"
        );
    }
    let mut taken = 0;
    for document in DOCUMENTS.iter() {
        let root = root_name(document);
        let expected = usize::from(PARSED_ROOTS.contains(&root));
        assert_eq!(
            parse_with_every_parser(document),
            expected,
            "recorded <{root}> document: {}",
            &document[..document.len().min(200)]
        );
        taken += expected;
    }
    assert!(taken > 30, "only {taken} recorded documents have a parser");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Damaged replies decode to an answer or a typed error, and a
    /// document they still carry goes through every parser without panic.
    #[test]
    fn damaged_replies_never_panic(
        index in any::<prop::sample::Index>(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let damaged = damage(&REPLIES, index, &mutations);
        if let Ok(Answer::Str(document)) = decode_response("one.test", &damaged, DEFAULT_RESPONSE_LIMIT) {
            parse_with_every_parser(&document);
        }
    }

    /// Damaged documents give `Ok` or a `DocError` from every parser.
    #[test]
    fn damaged_documents_never_panic(
        index in any::<prop::sample::Index>(),
        mutations in prop::collection::vec(mutation(), 1..4),
    ) {
        let damaged = damage(&DOCUMENTS, index, &mutations);
        parse_with_every_parser(&String::from_utf8_lossy(&damaged));
    }

    /// A recorded VM rewritten with random ids, states, NIC addresses and
    /// CONTEXT entries, carried in a reply, reads back to those values.
    #[test]
    fn rewritten_vm_reads_back(values in vm_values()) {
        let document = rewrite_vm(&values);
        let answer = decode_response("one.vm.info", success_reply(&document).as_bytes(), DEFAULT_RESPONSE_LIMIT);
        let Ok(Answer::Str(carried)) = answer else {
            return Err(TestCaseError::fail(format!("reply not read: {answer:?}")));
        };
        prop_assert_eq!(&carried, &document);
        let vm = parse_vm(&carried).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(vm.id, values.id);
        prop_assert_eq!(vm.state, values.state);
        prop_assert_eq!(vm.lcm_state, values.lcm_state);
        prop_assert_eq!(vm.nics.len(), 1);
        prop_assert_eq!(vm.nics[0].ip.as_deref(), Some(values.ip.as_str()));
        prop_assert_eq!(vm.nics[0].mac.as_deref(), Some(values.mac.as_str()));
        prop_assert_eq!(vm.context, values.context);
    }
}
