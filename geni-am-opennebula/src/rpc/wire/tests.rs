//! The codec against the real traffic of oned 7.4.0, the 4-element failure
//! arrays and fault strings of 5.x, a raw 5.8 wire capture, and hostile
//! bodies.

use super::*;
use geni_xmlrpc::{decode_call, encode_fault, encode_response};
use serde_json::{Value as Json, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Bodies as large as the recorded ones, and then some.
const LIMIT: usize = 64 << 20;

fn recorded(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/opennebula/recorded")
        .join(relative)
}

fn read_json(path: &Path) -> Json {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"))
}

/// The recorded files of `folder` whose names end with `suffix`, by call name.
fn calls_in(folder: &Path, suffix: &str) -> BTreeMap<String, PathBuf> {
    std::fs::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter_map(|path| {
            let name = path.file_name()?.to_str()?.strip_suffix(suffix)?.to_owned();
            Some((name, path))
        })
        .collect()
}

/// What a call gave.
type Outcome = Result<Answer, RpcError>;

/// The answer or error a result recorded as JSON stands for.
fn expected_outcome(method: &str, result: &Json) -> Outcome {
    if let Some(fault) = result.get("fault") {
        return Err(RpcError::Fault {
            method: method.into(),
            code: fault["faultCode"].as_i64().unwrap(),
            message: fault["faultString"].as_str().unwrap().into(),
        });
    }
    let items = result.as_array().unwrap();
    if items[0] == Json::Bool(true) {
        assert_eq!(items.len(), 3, "{result}");
        return Ok(match &items[1] {
            Json::String(text) => Answer::Str(text.clone()),
            Json::Bool(flag) => Answer::Bool(*flag),
            other => Answer::Int(other.as_i64().unwrap()),
        });
    }
    let resp_id = items[3].as_i64().unwrap();
    Err(RpcError::Refused {
        method: method.into(),
        code: ErrorCode::from_code(items[2].as_i64().unwrap()),
        message: items[1].as_str().unwrap().into(),
        object: (resp_id != -1).then_some(resp_id),
    })
}

/// An XML document reduced to what survives pretty-printing: no
/// declaration, no white space, empty elements written out in full, no
/// empty CDATA sections.
fn normalised_xml(document: &str) -> String {
    let mut text = document.trim_start();
    if text.starts_with("<?xml") {
        text = &text[text.find("?>").unwrap() + 2..];
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(end) = rest.find("/>") {
        let (before, after) = rest.split_at(end);
        let start = before.rfind('<').unwrap();
        out.push_str(before);
        out.push_str(&format!("></{}>", &before[start + 1..]));
        rest = &after[2..];
    }
    out.push_str(rest);
    out.replace("<![CDATA[]]>", "")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect()
}

/// The recorded outcome stands for the decoded one. summary.json shows an
/// XML answer as `<xml N chars>`, counted before install paths in the
/// documents were rewritten, so the document itself is compared with its
/// pretty-printed `NAME.payload.xml`.
fn matches_recorded(name: &str, folder: &Path, decoded: &Outcome, recorded: &Outcome) -> bool {
    match (decoded, recorded) {
        (Ok(Answer::Str(document)), Ok(Answer::Str(placeholder)))
            if placeholder.starts_with("<xml ") =>
        {
            let payload = folder.join(format!("{name}.payload.xml"));
            let payload =
                std::fs::read_to_string(&payload).unwrap_or_else(|e| panic!("{payload:?}: {e}"));
            normalised_xml(document) == normalised_xml(&payload)
        }
        _ => decoded == recorded,
    }
}

#[test]
fn every_recorded_oned_7_4_reply_decodes_as_summarised() {
    let folder = recorded("oned-7.4.0");
    let summary = read_json(&folder.join("summary.json"));
    let mut expected: BTreeMap<String, Vec<(String, Outcome)>> = BTreeMap::new();
    for entry in summary.as_array().unwrap() {
        let method = entry["method"].as_str().unwrap();
        assert_eq!(entry["http_status"], 200);
        expected
            .entry(entry["name"].as_str().unwrap().to_owned())
            .or_default()
            .push((method.into(), expected_outcome(method, &entry["result"])));
    }
    let responses = calls_in(&folder, ".response.xml");
    assert_eq!(
        responses.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>(),
        "every reply file is summarised and every summarised call has its file"
    );
    let (mut refusals, mut faults, mut ints) = (0, 0, 0);
    for (name, path) in &responses {
        let body = std::fs::read(path).unwrap();
        // A call polled twice under one name keeps the last reply: it
        // must match one of the recorded results.
        let candidates = &expected[name];
        let method = &candidates[0].0;
        let outcome = decode_response(method, &body, LIMIT);
        assert!(
            candidates
                .iter()
                .any(|(_, want)| matches_recorded(name, &folder, &outcome, want)),
            "{name}: decoded {outcome:?}, summary says {candidates:?}"
        );
        match outcome {
            Err(RpcError::Refused { .. }) => refusals += 1,
            Err(RpcError::Fault { .. }) => faults += 1,
            Ok(Answer::Int(_)) => ints += 1,
            _ => {}
        }
    }
    assert_eq!((refusals, faults, ints), (15, 3, 15));
}

/// The session and parameters of a recorded call, as the client's types.
fn call_params(call: &geni_xmlrpc::Call) -> (String, Vec<Param>) {
    let mut values = call.params.iter();
    let Some(Value::String(session)) = values.next() else {
        panic!("{}: parameter #0 is not the session string", call.method);
    };
    let params = values
        .map(|value| match value {
            Value::String(text) => Param::Str(text.clone()),
            Value::Integer(number) => Param::Int(*number),
            Value::Boolean(flag) => Param::Bool(*flag),
            other => panic!("{}: a parameter of type {other:?}", call.method),
        })
        .collect();
    (session.clone(), params)
}

/// Re-encodes a recorded call with the client's encoder; both decode alike.
fn assert_reencodes(recorded_body: &[u8]) {
    let recorded_call = decode_call(recorded_body, LIMIT).unwrap();
    let (session, params) = call_params(&recorded_call);
    let session = Session::parse(&session).unwrap();
    let ours = encode_call(&recorded_call.method, &session, &params).unwrap();
    assert_eq!(decode_call(ours.as_bytes(), LIMIT).unwrap(), recorded_call);
}

#[test]
fn every_recorded_oned_7_4_request_reencodes_to_the_same_call() {
    let folder = recorded("oned-7.4.0");
    let requests = calls_in(&folder, ".request.xml");
    let mut refused_sessions = Vec::new();
    for (name, path) in &requests {
        let body = std::fs::read(path).unwrap();
        let call = decode_call(&body, LIMIT).unwrap();
        let (session, _) = call_params(&call);
        if Session::parse(&session).is_err() {
            // Sessions oned refused are caught before any call.
            refused_sessions.push(name.as_str());
            continue;
        }
        assert_reencodes(&body);
    }
    assert_eq!(requests.len(), 75);
    assert_eq!(
        refused_sessions,
        ["err.empty-session", "err.malformed-session"]
    );
}

#[test]
fn strings_are_escaped_and_types_kept() {
    let session = Session::parse("amsvc:tok<en>&").unwrap();
    let template = "<TEMPLATE><LABELS>geni/s1</LABELS></TEMPLATE>\r\nA=\"b\"";
    let params = [
        Param::Int(7),
        Param::Str("geni-node-0".into()),
        Param::Bool(true),
        Param::Str(template.into()),
    ];
    let body = encode_call("one.template.instantiate", &session, &params).unwrap();
    assert!(body.contains("<i4>7</i4>"), "{body}");
    assert!(body.contains("<boolean>1</boolean>"), "{body}");
    assert!(body.contains("&lt;TEMPLATE&gt;&lt;LABELS&gt;"), "{body}");
    let call = decode_call(body.as_bytes(), LIMIT).unwrap();
    assert_eq!(call.params[0], Value::String("amsvc:tok<en>&".into()));
    assert_eq!(call.params[4], Value::String(template.into()));

    let bad = encode_call(
        "one.vm.update",
        &session,
        &[Param::Int(1), Param::Str("key\u{1}".into())],
    );
    assert!(
        matches!(&bad, Err(RpcError::Fault { message, .. }) if message.contains("parameter #2 holds U+0001")),
        "{bad:?}"
    );
    assert!(!bad.unwrap_err().is_retryable());
}

/// A JSON result array as a `dxr` value.
fn json_value(json: &Json) -> Value {
    match json {
        Json::Bool(flag) => Value::Boolean(*flag),
        Json::String(text) => Value::String(text.clone()),
        Json::Number(number) => Value::Integer(number.as_i64().unwrap().try_into().unwrap()),
        Json::Array(items) => Value::Array(items.iter().map(json_value).collect()),
        other => panic!("unexpected JSON {other}"),
    }
}

/// A fault as printed by a client library: the code (if printed) and the string.
fn printed_fault(line: &str) -> (Option<i32>, String) {
    let message = match line.find(['"', '\'']) {
        Some(start) if line.contains(": ") => {
            let quote = &line[start..=start];
            let rest = &line[start + 1..];
            rest[..rest.rfind(quote).unwrap()].to_owned()
        }
        _ => line.rsplit(": ").next().unwrap().to_owned(),
    };
    let code = line
        .split(|c: char| !(c.is_ascii_digit() || c == '-'))
        .filter_map(|word| word.parse::<i32>().ok())
        .find(|code| (500..=510).contains(&code.abs()));
    (code, message)
}

#[test]
fn pyone_5_4_results_and_faults_decode() {
    let mut arrays = 0;
    let mut four_element_failures = 0;
    let mut faults = 0;
    for file in ["session-integration.json", "session-auth-error.json"] {
        let sessions = read_json(&recorded("pyone-5.4").join(file));
        for (method, hashes) in sessions
            .as_object()
            .unwrap()
            .values()
            .flat_map(|calls| calls.as_object().unwrap().iter().collect::<Vec<_>>())
        {
            for result in hashes
                .as_object()
                .unwrap()
                .values()
                .flat_map(|v| v.as_array().unwrap())
            {
                let (body, expected) = match result.get("xmlrpc_fault") {
                    Some(printed) => {
                        faults += 1;
                        let (code, message) = printed_fault(printed.as_str().unwrap());
                        let code = code.unwrap();
                        let body = encode_fault(code, &message);
                        let fault = json!({"fault": {"faultCode": code, "faultString": message}});
                        (body, expected_outcome(method, &fault))
                    }
                    None => {
                        arrays += 1;
                        if result.as_array().unwrap().len() == 4 {
                            four_element_failures += 1;
                        }
                        let body = encode_response(&json_value(result)).unwrap();
                        (body, expected_outcome(method, result))
                    }
                };
                assert_eq!(decode_response(method, body.as_bytes(), LIMIT), expected);
            }
        }
    }
    assert_eq!((arrays, four_element_failures, faults), (26, 1, 1));
}

#[test]
fn the_5_8_wire_capture_answers_a_boolean() {
    let capture =
        std::fs::read_to_string(recorded("issues/one-3647-wire-one.image.lock.txt")).unwrap();
    let (request, response) = capture.split_once("HTTP/1.1 200 OK").unwrap();
    let request_body = &request[request.find("<?xml").unwrap()..];
    assert_reencodes(request_body.as_bytes());
    let response_body = &response[response.find("<?xml").unwrap()..];
    assert_eq!(
        decode_response("one.image.lock", response_body.as_bytes(), LIMIT),
        Ok(Answer::Bool(true))
    );
}

#[test]
fn recorded_fault_strings_are_faults() {
    let text = std::fs::read_to_string(recorded("issues/faults-type-mismatch.txt")).unwrap();
    let mut seen = 0;
    for line in text
        .lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
    {
        let (code, message) = printed_fault(line);
        assert!(
            ["supposed to be", "parameters", "not defined"]
                .iter()
                .any(|text| message.contains(text)),
            "{line}: {message}"
        );
        // One client library prints no code; xmlrpc-c sends -501 for these.
        let code = code.unwrap_or(-501);
        let body = encode_fault(code, &message);
        let err = decode_response("one.vm.deploy", body.as_bytes(), LIMIT).unwrap_err();
        assert_eq!(
            err,
            RpcError::Fault {
                method: "one.vm.deploy".into(),
                code: code.into(),
                message: message.clone()
            }
        );
        assert!(!err.is_retryable());
        seen += 1;
    }
    assert_eq!(seen, 5);
}

/// A `methodResponse` carrying `values` as its result array.
fn reply(values: &str) -> String {
    format!(
        "<?xml version=\"1.0\"?><methodResponse><params><param><value><array><data>{values}</data></array></value></param></params></methodResponse>"
    )
}

#[test]
fn malformed_and_hostile_replies_are_transport_errors() {
    let ok = "<value><boolean>1</boolean></value>";
    let cases: Vec<(String, &str)> = vec![
        (String::new(), "not XML-RPC"),
        ("Internal Server Error".into(), "not XML-RPC"),
        ("<html><body>502 Bad Gateway</body></html>".into(), "not XML-RPC"),
        (
            format!("<!DOCTYPE methodResponse [<!ENTITY x \"y\">]>{}", reply(ok)),
            "DOCTYPE",
        ),
        (reply("<value><string>&xxe;</string></value>"), "entity reference"),
        (
            format!(
                "<methodResponse><params><param>{}x{}</param></params></methodResponse>",
                "<value><array><data>".repeat(40),
                "</data></array></value>".repeat(40)
            ),
            "nested more than",
        ),
        (
            reply("<value><boolean>1</boolean></value><value><i4>5</i4></value>"),
            "has 2 elements",
        ),
        (reply(""), "the result array is empty"),
        (
            reply("<value><i4>1</i4></value><value><i4>5</i4></value><value><i4>0</i4></value>"),
            "element [0] of the result array is an <int>",
        ),
        (
            reply("<value><boolean>1</boolean></value><value><double>1.5</double></value><value><i4>0</i4></value>"),
            "element [1] of a success is a <double>",
        ),
        (
            reply("<value><boolean>1</boolean></value><value><i4>5</i4></value><value><string>0</string></value>"),
            "element [2] (the error code) is a <string>",
        ),
        (
            reply("<value><boolean>0</boolean></value><value><i4>5</i4></value><value><i4>256</i4></value><value><i4>-1</i4></value>"),
            "element [1] of a failure is an <int>",
        ),
        (
            reply("<value><boolean>0</boolean></value><value>oops</value><value><string>256</string></value><value><i4>-1</i4></value>"),
            "element [2] (the error code) is a <string>",
        ),
        (
            reply("<value><boolean>0</boolean></value><value>oops</value><value><i4>256</i4></value><value><i4>-1</i4></value><value><nil/></value>"),
            "element [4] (the replication index) is a <nil/>",
        ),
        (
            reply("<value><boolean>0</boolean></value><value>oops</value><value><i4>256</i4></value>"),
            "has 3 elements; a failure holds 4 or 5",
        ),
        (
            reply("<value><boolean>1</boolean></value><value>x</value><value><i4>0</i4></value><value><i4>0</i4></value>"),
            "has 4 elements; a success holds 3",
        ),
        (
            "<methodResponse><params><param><value><struct></struct></value></param></params></methodResponse>".into(),
            "holds a <struct>, not the result array",
        ),
        (reply(ok).replace("<boolean>1", "<boolean>yes"), "is not"),
        (reply(ok).replace("methodResponse>", "methodCall>"), "not XML-RPC"),
    ];
    for (body, detail) in &cases {
        let outcome = decode_response("one.vm.info", body.as_bytes(), LIMIT);
        assert!(
            matches!(&outcome, Err(RpcError::Transport { detail: got, .. }) if got.contains(detail)),
            "{body}\nexpected a transport error naming {detail:?}, got {outcome:?}"
        );
    }
    let not_utf8 = [reply(ok).as_bytes(), &[0xff, 0xfe]].concat();
    assert!(matches!(
        decode_response("one.vm.info", &not_utf8, LIMIT),
        Err(RpcError::Transport { detail, .. }) if detail.contains("UTF-8")
    ));
    let big = reply(ok);
    assert!(matches!(
        decode_response("one.vm.info", big.as_bytes(), 100),
        Err(RpcError::Transport { detail, .. }) if detail.contains("more than the limit of 100 bytes")
    ));
}
