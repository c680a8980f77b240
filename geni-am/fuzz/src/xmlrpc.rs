//! The XML-RPC request decoder, where every call from the internet enters.

use geni_xmlrpc::{
    as_bool, as_int, as_str, as_struct, as_xmlrpc_datetime, decode_call, encode_call,
};

/// The body limit of the server's default configuration.
const BODY_LIMIT: usize = 16 << 20;

/// `xmlrpc_call`: decoding `data` as a request body never panics; a
/// decoded call can be read with every lenient accessor, and when it can
/// be encoded again, the encoding decodes and re-encodes to the same bytes.
pub fn xmlrpc_call(data: &[u8]) {
    let Ok(call) = decode_call(data, BODY_LIMIT) else {
        return;
    };
    for param in &call.params {
        let _ = (as_bool(param), as_int(param), as_str(param));
        let _ = as_xmlrpc_datetime(param);
        if let Some(members) = as_struct(param) {
            for value in members.values() {
                let _ = (as_bool(value), as_int(value), as_str(value));
            }
        }
    }
    let Ok(encoded) = encode_call(&call.method, &call.params) else {
        return;
    };
    let again = decode_call(encoded.as_bytes(), BODY_LIMIT)
        .unwrap_or_else(|e| panic!("an encoded call must decode: {e}\n{encoded}"));
    assert_eq!(again.method, call.method, "the method name changed");
    let twice = encode_call(&again.method, &again.params).expect("a decoded encoding re-encodes");
    assert_eq!(twice, encoded, "re-encoding changed the call");
}
