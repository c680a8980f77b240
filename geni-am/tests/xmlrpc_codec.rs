//! The XML-RPC codec against bodies shaped as real clients send them
//! (Python's `xmlrpc.client`, Apache XML-RPC for Java), real credentials
//! and RSpecs of the corpus carried as strings, and hostile input.

use geni_xmlrpc::{
    Call, DecodeError, Value, as_bool, as_str, decode_call, decode_response, encode_call,
    encode_fault, encode_response, fault_code, member,
};
use std::collections::BTreeMap;
use std::path::PathBuf;

const LIMIT: usize = 16 << 20;

fn corpus(path: &str) -> String {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus")
        .join(path);
    std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// Escapes text as Python's `xmlrpc.client.escape` does (`&`, `<`, `>` only).
fn python_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A call as Python 3's `xmlrpc.client.dumps` writes it: one element per
/// line, `<string>` typed strings, a struct of options after a credential list.
fn python_call(method: &str, credential: &str, rspec: &str) -> String {
    format!(
        "<?xml version='1.0'?>\n<methodCall>\n<methodName>{method}</methodName>\n<params>\n\
         <param>\n<value><array><data>\n<value><struct>\n\
         <member>\n<name>geni_type</name>\n<value><string>geni_sfa</string></value>\n</member>\n\
         <member>\n<name>geni_version</name>\n<value><string>3</string></value>\n</member>\n\
         <member>\n<name>geni_value</name>\n<value><string>{}</string></value>\n</member>\n\
         </struct></value>\n</data></array></value>\n</param>\n\
         <param>\n<value><string>{}</string></value>\n</param>\n\
         <param>\n<value><struct>\n\
         <member>\n<name>geni_best_effort</name>\n<value><boolean>1</boolean></value>\n</member>\n\
         <member>\n<name>geni_end_time</name>\n<value><dateTime.iso8601>20240501T12:00:00</dateTime.iso8601></value>\n</member>\n\
         <member>\n<name>count</name>\n<value><int>3</int></value>\n</member>\n\
         <member>\n<name>blob</name>\n<value><base64>\nAAECAw==\n</base64></value>\n</member>\n\
         <member>\n<name>nothing</name>\n<value><nil/></value>\n</member>\n\
         </struct></value>\n</param>\n</params>\n</methodCall>\n",
        python_escape(credential),
        python_escape(rspec)
    )
}

#[test]
fn python_style_call_with_real_credential_and_rspec_decodes_exactly() {
    let credential = corpus("creds/credentials/felix__alice-cred.xml");
    let rspec = corpus("rspec/request/geni-lib3__5by8-grid-6am-demo.xml");
    let body = python_call("Allocate", &credential, &rspec);
    let call = decode_call(body.as_bytes(), LIMIT).unwrap();
    assert_eq!(call.method, "Allocate");
    assert_eq!(call.params.len(), 3);
    let Value::Array(creds) = &call.params[0] else {
        panic!("credentials are not an array: {:?}", call.params[0]);
    };
    let value = member(&creds[0], "geni_value").and_then(as_str).unwrap();
    assert_eq!(
        value, credential,
        "credential must be unescaped exactly once"
    );
    assert_eq!(as_str(&call.params[1]), Some(rspec.as_str()));
    let options = &call.params[2];
    assert_eq!(
        member(options, "geni_best_effort").and_then(as_bool),
        Some(true)
    );
    assert_eq!(member(options, "count"), Some(&Value::Integer(3)));
    assert_eq!(
        member(options, "blob"),
        Some(&Value::Base64(vec![0, 1, 2, 3]))
    );
    assert_eq!(member(options, "nothing"), Some(&Value::Nil));
    assert!(matches!(
        member(options, "geni_end_time"),
        Some(Value::DateTime(_))
    ));
}

/// `geni_available` is true and `geni_compressed` false, however typed.
fn assert_listresources_flags(options: &Value) {
    assert_eq!(
        member(options, "geni_available").and_then(as_bool),
        Some(true)
    );
    assert_eq!(
        member(options, "geni_compressed").and_then(as_bool),
        Some(false)
    );
}

#[test]
fn java_style_call_with_untyped_values_and_crlf_decodes() {
    let body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r\n<methodCall><methodName>ListResources</methodName>\
        <params><param><value><array><data><value>cred&amp;text\r\nline two</value></data></array></value></param>\
        <param><value><struct><member><name>geni_available</name><value><i4>1</i4></value></member>\
        <member><name>geni_compressed</name><value>false</value></member>\
        <member><name>big</name><value><i8>8589934592</i8></value></member>\
        <member><name>empty</name><value></value></member></struct></value></param></params></methodCall>\r\n";
    let call = decode_call(body.as_bytes(), LIMIT).unwrap();
    assert_eq!(call.method, "ListResources");
    assert_eq!(
        call.params[0],
        Value::Array(vec![Value::String("cred&text\nline two".into())])
    );
    let options = &call.params[1];
    assert_listresources_flags(options);
    assert_eq!(member(options, "big"), Some(&Value::Long(8_589_934_592)));
    assert_eq!(
        member(options, "empty"),
        Some(&Value::String(String::new()))
    );
}

#[test]
fn calls_with_no_params_are_accepted_in_every_spelling() {
    for body in [
        "<?xml version='1.0'?>\n<methodCall>\n<methodName>GetVersion</methodName>\n<params>\n</params>\n</methodCall>\n",
        "<methodCall><methodName>GetVersion</methodName><params/></methodCall>",
        "<methodCall><methodName>GetVersion</methodName></methodCall>",
    ] {
        let call = decode_call(body.as_bytes(), LIMIT).unwrap_or_else(|e| panic!("{body}: {e}"));
        assert_eq!(
            call,
            Call {
                method: "GetVersion".into(),
                params: vec![]
            }
        );
    }
}

fn refusal(body: &str) -> DecodeError {
    decode_call(body.as_bytes(), LIMIT).expect_err(body)
}

#[test]
fn doctype_and_entities_are_refused_before_any_expansion() {
    let billion_laughs = "<?xml version=\"1.0\"?>\n<!DOCTYPE lolz [<!ENTITY lol \"lol\"><!ENTITY lol2 \"&lol;&lol;\">]>\n\
        <methodCall><methodName>&lol2;</methodName></methodCall>";
    assert_eq!(refusal(billion_laughs), DecodeError::Dtd { line: 2 });
    let external = "<methodCall><methodName>GetVersion</methodName><params><param>\n<value>&xxe;</value></param></params></methodCall>";
    assert_eq!(
        refusal(external),
        DecodeError::Entity {
            line: 2,
            name: "xxe".into()
        }
    );
    let error = refusal(billion_laughs).to_string();
    assert!(error.contains("DOCTYPE"), "{error}");
}

#[test]
fn size_and_depth_limits_hold() {
    let body = python_call("Allocate", "c", "r");
    assert_eq!(
        decode_call(body.as_bytes(), 100),
        Err(DecodeError::TooLarge {
            size: body.len(),
            limit: 100
        })
    );
    let deep = format!(
        "<methodCall><methodName>x</methodName><params><param>{}{}</param></params></methodCall>",
        "<value><array><data>".repeat(30),
        "</data></array></value>".repeat(30)
    );
    assert!(matches!(
        refusal(&deep),
        DecodeError::TooDeep { limit: 64, .. }
    ));
}

#[test]
fn malformed_envelopes_get_precise_messages() {
    let cases: [(&str, &str); 10] = [
        ("", "holds no XML element"),
        (
            "<methodCall><methodName>x</methodName>",
            "line 1: not well-formed XML",
        ),
        (
            "<methodResponse/>",
            "root element is <methodResponse>, expected <methodCall>",
        ),
        (
            "<methodCall><methodName>x</methodName>\n<params><param><value><foo/></value></param></params></methodCall>",
            "line 2: <foo> is not an XML-RPC element",
        ),
        (
            "<methodCall><methodName>x</methodName><params><param>\n\n<value><int>12x</int></value></param></params></methodCall>",
            "line 3: <int>12x</int> is not a 32-bit integer",
        ),
        (
            "<methodCall><methodName>x</methodName><params><param><value><boolean>yes</boolean></value></param></params></methodCall>",
            "is not a boolean (0 or 1)",
        ),
        (
            "<methodCall><methodName>x</methodName><params><value><string>a</string></value></params></methodCall>",
            "<value> is not allowed inside <params> (only inside <param> or <member> or <data> or <fault>)",
        ),
        (
            "<methodCall><params/></methodCall>",
            "not an XML-RPC methodCall: expected <methodName> followed by optional <params>",
        ),
        (
            "<methodCall><methodName>x</methodName></methodCall><methodCall/>",
            "a second element follows the root element",
        ),
        (
            "<methodCall><methodName></methodName></methodCall>",
            "not an XML-RPC methodCall",
        ),
    ];
    for (body, expected) in cases {
        let error = refusal(body);
        assert!(
            error.to_string().contains(expected),
            "{body:?}: {error} (expected {expected:?})"
        );
    }
    assert_eq!(
        refusal("<methodCall>\u{0}").fault_code(),
        fault_code::PARSE_ERROR
    );
    assert_eq!(
        decode_call(b"<methodCall>\xff</methodCall>", LIMIT),
        Err(DecodeError::NotUtf8 { offset: 12 })
    );
    assert_eq!(
        refusal("<methodResponse/>").fault_code(),
        fault_code::INVALID_REQUEST
    );
}

fn envelope(output: &str) -> Value {
    Value::Struct(BTreeMap::from([
        (
            "code".to_owned(),
            Value::Struct(BTreeMap::from([(
                "geni_code".to_owned(),
                Value::Integer(0),
            )])),
        ),
        ("value".to_owned(), Value::Array(vec![Value::Boolean(true)])),
        ("output".to_owned(), Value::String(output.to_owned())),
    ]))
}

#[test]
fn responses_round_trip_and_control_characters_are_replaced() {
    let xml = encode_response(&envelope("trace\u{1}end & <more>\r\n")).unwrap();
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
    assert!(
        xml.contains("<name>geni_code</name><value><i4>0</i4></value>"),
        "{xml}"
    );
    let decoded = decode_response(xml.as_bytes(), LIMIT).unwrap().unwrap();
    assert_eq!(decoded, envelope("trace\u{FFFD}end & <more>\r\n"));
}

#[test]
fn responses_never_carry_nil_i8_datetime_or_base64() {
    for (bad, kind) in [
        (Value::Nil, "nil"),
        (Value::Long(1), "i8"),
        (Value::Base64(vec![1]), "base64"),
    ] {
        let mut value = envelope("");
        if let Value::Struct(members) = &mut value {
            members.insert("value".into(), Value::Array(vec![Value::Integer(1), bad]));
        }
        let error = encode_response(&value).unwrap_err().to_string();
        assert!(
            error.contains("value.value[1]") && error.contains(kind),
            "{error}"
        );
    }
}

#[test]
fn faults_and_calls_round_trip_through_the_client_side() {
    let fault = encode_fault(fault_code::METHOD_NOT_FOUND, "no method Foo\u{7}");
    let decoded = decode_response(fault.as_bytes(), LIMIT)
        .unwrap()
        .unwrap_err();
    assert_eq!(decoded.code(), fault_code::METHOD_NOT_FOUND);
    assert_eq!(decoded.string(), "no method Foo\u{FFFD}");
    let params = vec![Value::Array(vec![]), Value::Struct(BTreeMap::new())];
    let call = encode_call("ListResources", &params).unwrap();
    assert_eq!(
        decode_call(call.as_bytes(), LIMIT).unwrap(),
        Call {
            method: "ListResources".into(),
            params
        }
    );
}

/// A body written by Python's own `xmlrpc.client.dumps` (the library omni,
/// geni-lib and gcf use), carrying a real credential, a datetime, bytes,
/// `None`, a big integer as a string and nested structs.
fn python_dumps(credential_path: &std::path::Path) -> String {
    let script = r#"
import sys, datetime, xmlrpc.client
cred = open(sys.argv[1], encoding="utf-8", newline="").read()
params = (
    [{"geni_type": "geni_sfa", "geni_version": "3", "geni_value": cred}],
    {"geni_rspec_version": {"type": "GENI", "version": "3"},
     "geni_available": True, "geni_compressed": False,
     "geni_end_time": datetime.datetime(2024, 5, 1, 12, 0, 0),
     "blob": xmlrpc.client.Binary(b"\x00\x01\x02"),
     "nothing": None, "count": 7, "ratio": 0.5},
)
sys.stdout.write(xmlrpc.client.dumps(params, "ListResources", allow_none=True))
"#;
    let output = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(credential_path)
        .output()
        .expect("python3 runs (it is needed for the interop suites)");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn a_call_written_by_python_xmlrpc_client_decodes_exactly() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus/creds/credentials/felix__alice-cred.xml");
    let body = python_dumps(&path);
    let call = decode_call(body.as_bytes(), LIMIT).unwrap();
    assert_eq!(call.method, "ListResources");
    let Value::Array(creds) = &call.params[0] else {
        panic!("{:?}", call.params[0]);
    };
    let credential = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        member(&creds[0], "geni_value").and_then(as_str),
        Some(credential.as_str())
    );
    let options = &call.params[1];
    assert_listresources_flags(options);
    assert_eq!(member(options, "count"), Some(&Value::Integer(7)));
    assert_eq!(member(options, "ratio"), Some(&Value::Double(0.5)));
    assert_eq!(member(options, "blob"), Some(&Value::Base64(vec![0, 1, 2])));
    assert_eq!(member(options, "nothing"), Some(&Value::Nil));
    let end = member(options, "geni_end_time").and_then(geni_xmlrpc::as_xmlrpc_datetime);
    assert_eq!(
        end.map(|t| t.to_rfc3339()),
        Some("2024-05-01T12:00:00+00:00".into())
    );
    let version = member(options, "geni_rspec_version").unwrap();
    assert_eq!(member(version, "version").and_then(as_str), Some("3"));
}
