//! What each kind of job does: read the sliver, call the backend, write
//! the resulting state and annotations back. Jobs are idempotent, so a job
//! claimed again after a crash can run from the start: creation first
//! looks for the VM by its tag.

use super::error::JobError;
use super::networks::{self, Attachment};
use super::{Context, observe};
use crate::model::{AllocationState, JobKind, OperationalState, UserKeys};
use crate::store::jobs::JobRow;
use crate::store::slivers::SliverRow;
use crate::store::{StoreError, slices};
use chrono::Utc;
use geni_am_backend::Compute as _;
use geni_am_backend::{BackendError, ExecuteSpec, InstallSpec, VmHandle, VmSpec, VmState};

/// Runs one claimed job to its end.
pub fn run(cx: &Context, job: &JobRow) -> Result<(), JobError> {
    let kind = job.kind;
    if kind == JobKind::DestroyNetwork {
        return networks::destroy(cx, job);
    }
    let Some(sliver) = job.sliver_urn.as_deref().map(|u| cx.store.sliver(u)) else {
        return Ok(());
    };
    let Some(sliver) = sliver? else {
        return Ok(());
    };
    if kind == JobKind::Destroy {
        return destroy(cx, &sliver);
    }
    if sliver.allocation_state != AllocationState::Provisioned {
        tracing::debug!(sliver = %sliver.urn, kind = kind.as_str(), "sliver no longer provisioned; nothing to do");
        return Ok(());
    }
    match kind {
        JobKind::Provision => provision(cx, &sliver),
        JobKind::Start => act(cx, &sliver, OperationalState::Configuring, |vm| {
            cx.backend.start(vm)
        }),
        JobKind::Stop => act(cx, &sliver, OperationalState::Stopping, |vm| {
            cx.backend.stop(vm)
        }),
        JobKind::Restart => act(cx, &sliver, OperationalState::Configuring, |vm| {
            cx.backend.restart(vm)
        }),
        JobKind::UpdateUsers => update_users(cx, &sliver),
        JobKind::Destroy | JobKind::DestroyNetwork => Ok(()),
    }
}

/// The VM specification of a sliver attached as `attachment` says.
fn vm_spec(sliver: &SliverRow, users: Vec<UserKeys>, attachment: Attachment) -> VmSpec {
    VmSpec {
        tag: sliver.urn.clone(),
        name: sliver.client_id.clone(),
        host: Some(sliver.component_id.clone()),
        sliver_type: sliver.sliver_type.clone(),
        size: sliver.granted_size(),
        disk_image: sliver.disk_image.clone(),
        users,
        networks: attachment.nics,
        exclusive: sliver.exclusive,
        install: attachment
            .plan
            .install
            .into_iter()
            .map(|i| InstallSpec {
                url: i.url,
                install_path: i.install_path,
            })
            .collect(),
        execute: attachment
            .plan
            .execute
            .into_iter()
            .map(|e| ExecuteSpec {
                shell: e.shell,
                command: e.command,
            })
            .collect(),
    }
}

fn slice_users(cx: &Context, sliver: &SliverRow) -> Result<Vec<UserKeys>, StoreError> {
    cx.store.read(|conn| slices::users(conn, &sliver.slice_urn))
}

/// Creates the sliver's link networks and its VM unless one with its tag
/// exists, and records the VM's id and interfaces (before the VM is
/// created, so a link in use is never taken for free); the poller moves
/// the sliver on once the VM is defined.
fn provision(cx: &Context, sliver: &SliverRow) -> Result<(), JobError> {
    let attachment = networks::attach(cx, sliver)?;
    let mut annotations = sliver.annotations.value().clone();
    if annotations.interfaces.is_empty() && !attachment.interfaces.is_empty() {
        annotations.interfaces = attachment.interfaces.clone();
        cx.store
            .set_annotations(&sliver.urn, &annotations, Utc::now())?;
    }
    // `create_vm` returns the VM already carrying the sliver's tag, so a
    // job run again after a crash creates no second VM.
    let spec = vm_spec(sliver, slice_users(cx, sliver)?, attachment);
    let vm = cx.backend.create_vm(&spec)?;
    if annotations.backend_id.as_deref() != Some(vm.0.as_str()) {
        annotations.backend_id = Some(vm.0.clone());
        cx.store
            .set_annotations(&sliver.urn, &annotations, Utc::now())?;
    }
    tracing::info!(sliver = %sliver.urn, vm = %vm.0, "provisioned");
    Ok(())
}

/// The sliver's VM: the recorded id, or the VM found by its tag.
fn vm_of(cx: &Context, sliver: &SliverRow) -> Result<VmHandle, JobError> {
    if let Some(id) = sliver.annotations.value().backend_id.clone() {
        return Ok(VmHandle(id));
    }
    cx.backend.find_vm(&sliver.urn)?.ok_or_else(|| {
        JobError::Backend(BackendError::Transient(format!(
            "the VM of {} is not created yet",
            sliver.urn
        )))
    })
}

/// Runs a power action and records the state the sliver now waits in.
/// An action queued right after Provision (only `geni_start` is allowed
/// then) waits while the new VM is still being placed or deployed: a
/// cloud refuses to power such a VM, or ignores the request.
fn act(
    cx: &Context,
    sliver: &SliverRow,
    waiting: OperationalState,
    action: impl FnOnce(&VmHandle) -> Result<(), BackendError>,
) -> Result<(), JobError> {
    let vm = vm_of(cx, sliver)?;
    if sliver.operational_state == OperationalState::PendingAllocation
        && matches!(
            cx.backend.observe(&vm)?.state,
            VmState::Pending | VmState::Booting
        )
    {
        return Err(JobError::Waiting(format!(
            "the VM of {} is still being defined",
            sliver.urn
        )));
    }
    action(&vm)?;
    cx.store
        .set_operational_state(&sliver.urn, waiting, Utc::now())?;
    Ok(())
}

/// Installs the slice users' keys and returns the sliver to `geni_ready`
/// with its logins updated.
fn update_users(cx: &Context, sliver: &SliverRow) -> Result<(), JobError> {
    let vm = vm_of(cx, sliver)?;
    let users = slice_users(cx, sliver)?;
    cx.backend.update_users(&vm, &users)?;
    let seen = cx.backend.observe(&vm)?;
    let now = Utc::now();
    let annotations = observe::annotate(sliver.annotations.value().clone(), &seen, &users);
    cx.store.set_annotations(&sliver.urn, &annotations, now)?;
    cx.store
        .set_operational_state(&sliver.urn, OperationalState::Ready, now)?;
    Ok(())
}

/// Destroys the sliver's VM if there is one, then queues the destruction
/// of the link networks no provisioned sliver uses any more.
fn destroy(cx: &Context, sliver: &SliverRow) -> Result<(), JobError> {
    let vm = match sliver.annotations.value().backend_id.clone() {
        Some(id) => Some(VmHandle(id)),
        None => cx.backend.find_vm(&sliver.urn)?,
    };
    if let Some(vm) = vm {
        cx.backend.destroy(&vm)?;
        tracing::info!(sliver = %sliver.urn, vm = %vm.0, "VM destroyed");
    }
    networks::release(cx, sliver)
}
