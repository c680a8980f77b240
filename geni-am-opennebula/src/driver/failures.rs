//! How the driver words what went wrong: a VM that is not (or no longer)
//! there, an answer of the wrong type, a document that does not read.

use super::super::docs::DocError;
use super::super::rpc::{Answer, RpcError};
use geni_am_backend::{BackendError, VmHandle, VmObservation, VmState};

/// The OpenNebula id of `vm`; a handle that is not one names no VM.
pub(super) fn vm_id(vm: &VmHandle) -> Result<i32, BackendError> {
    vm.0.parse().map_err(|_| not_found_text(&vm.0))
}

/// VM `id` does not exist.
pub(super) fn not_found(id: i32) -> BackendError {
    not_found_text(&id.to_string())
}

/// VM `id` (as the handle wrote it) does not exist.
fn not_found_text(id: &str) -> BackendError {
    BackendError::NotFound {
        kind: "VM",
        id: id.to_owned(),
    }
}

/// A failure of a call about VM `id`: NO_EXISTS means the VM is gone.
pub(super) fn vm_error(err: RpcError, id: i32) -> BackendError {
    if err.is_no_exists() {
        not_found(id)
    } else {
        err.into()
    }
}

/// What VM `id` is once OpenNebula no longer knows it.
pub(super) fn gone(id: i32) -> VmObservation {
    VmObservation {
        state: VmState::Gone,
        message: format!("OpenNebula VM {id} no longer exists"),
        hostname: String::new(),
        addresses: Vec::new(),
    }
}

/// An answer of the wrong type for its method: a protocol mismatch, not
/// worth retrying.
pub(super) fn unexpected(method: &str, answer: &Answer) -> RpcError {
    RpcError::Fault {
        method: method.to_owned(),
        code: 0,
        message: format!("unexpected answer {answer:?}"),
    }
}

/// A document OpenNebula sent that does not read: not worth retrying.
pub(super) fn unreadable(err: DocError) -> BackendError {
    BackendError::Permanent(err.to_string())
}
