//! What each kind of job does: read the sliver, call the backend, and
//! return the resulting state and annotations, which the worker records
//! with the job's finish. After its action a job looks at the VM once: a
//! cloud that acted at once (the simulated one at zero delays) has the
//! VM where the sliver waits for it, and the sliver moves on without a
//! round of the poller, which follows the others. Jobs are idempotent,
//! so a job claimed again after a crash can run from the start: creation
//! first looks for the VM by its tag.

use super::error::JobError;
use super::networks::{self, Attachment};
use super::{Context, observe};
use crate::model::{AllocationState, JobKind, OperationalState, SliverAnnotations, UserKeys};
use crate::store::jobs::JobRow;
use crate::store::slivers::{SliverRow, SliverStep};
use crate::store::{StoreError, slices};
use chrono::Utc;
use geni_am_backend::Compute as _;
use geni_am_backend::{BackendError, ExecuteSpec, InstallSpec, VmHandle, VmSpec, VmState};

/// Runs one claimed job to its end; returns what it did to its sliver, in
/// order, for the worker to record with the job's finish.
pub fn run(cx: &Context, job: &JobRow) -> Result<Vec<SliverStep>, JobError> {
    let kind = job.kind;
    if kind == JobKind::DestroyNetwork {
        return networks::destroy(cx, job).map(|()| Vec::new());
    }
    let Some(sliver) = job.sliver_urn.as_deref().map(|u| cx.store.sliver(u)) else {
        return Ok(Vec::new());
    };
    let Some(sliver) = sliver? else {
        return Ok(Vec::new());
    };
    if kind == JobKind::Destroy {
        return destroy(cx, &sliver).map(|()| Vec::new());
    }
    if sliver.allocation_state != AllocationState::Provisioned {
        tracing::debug!(sliver = %sliver.urn, kind = kind.as_str(), "sliver no longer provisioned; nothing to do");
        return Ok(Vec::new());
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
        JobKind::Destroy | JobKind::DestroyNetwork => Ok(Vec::new()),
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
/// exists, records the interfaces (before the VM is created, so a link in
/// use is never taken for free) and returns the VM's id to record, with
/// the VM's state when it is defined already; else the poller moves the
/// sliver on once it is.
fn provision(cx: &Context, sliver: &SliverRow) -> Result<Vec<SliverStep>, JobError> {
    let attachment = networks::attach(cx, sliver)?;
    let mut annotations = sliver.annotations.value().clone();
    if annotations.interfaces.is_empty() && !attachment.interfaces.is_empty() {
        annotations.interfaces = attachment.interfaces.clone();
        cx.store
            .set_annotations(&sliver.urn, &annotations, Utc::now())?;
    }
    // `create_vm` returns the VM already carrying the sliver's tag, so a
    // job run again after a crash creates no second VM.
    let users = slice_users(cx, sliver)?;
    let spec = vm_spec(sliver, users.clone(), attachment);
    let vm = cx.backend.create_vm(&spec)?;
    let mut steps = Vec::new();
    if annotations.backend_id.as_deref() != Some(vm.0.as_str()) {
        annotations.backend_id = Some(vm.0.clone());
        steps.push(SliverStep::Annotations(annotations.clone()));
    }
    tracing::info!(sliver = %sliver.urn, vm = %vm.0, "provisioned");
    let waiting = sliver.operational_state;
    steps.extend(seen_at_once(
        cx,
        sliver,
        &vm,
        waiting,
        annotations,
        Some(&users),
    )?);
    Ok(steps)
}

/// What a sliver waiting in `waiting`, with `annotations`, becomes by
/// what its VM is seen as right after the job's action: the observation
/// the poller would have recorded, when the VM is already in the state
/// awaited; none while it is not (the poller follows it) or when the
/// backend could not be asked. `users` are the slice's, read here when
/// needed and not given.
fn seen_at_once(
    cx: &Context,
    sliver: &SliverRow,
    vm: &VmHandle,
    waiting: OperationalState,
    annotations: SliverAnnotations,
    users: Option<&[UserKeys]>,
) -> Result<Option<SliverStep>, JobError> {
    let seen = match cx.backend.observe(vm) {
        Ok(seen) => seen,
        Err(err) => {
            tracing::debug!(sliver = %sliver.urn, %err, "the VM could not be looked at after the job; the poller follows it");
            return Ok(None);
        }
    };
    let Some(next) = observe::next_state(waiting, seen.state) else {
        return Ok(None);
    };
    let users = match users {
        Some(users) => users.to_vec(),
        None if next == OperationalState::Failed => Vec::new(),
        None => slice_users(cx, sliver)?,
    };
    let observation = observe::observation(next, &seen, cx.backend.name(), annotations, &users);
    Ok(Some(SliverStep::Observed(observation)))
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

/// Runs a power action; returns the state the sliver now waits in, and
/// the state it reached when the VM is there already. An action queued
/// right after Provision (only `geni_start` is allowed then) waits while
/// the new VM is still being placed or deployed: a cloud refuses to
/// power such a VM, or ignores the request.
fn act(
    cx: &Context,
    sliver: &SliverRow,
    waiting: OperationalState,
    action: impl FnOnce(&VmHandle) -> Result<(), BackendError>,
) -> Result<Vec<SliverStep>, JobError> {
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
    let annotations = sliver.annotations.value().clone();
    let mut steps = vec![SliverStep::State(waiting)];
    steps.extend(seen_at_once(cx, sliver, &vm, waiting, annotations, None)?);
    Ok(steps)
}

/// Installs the slice users' keys and returns the sliver to `geni_ready`
/// with its logins updated.
fn update_users(cx: &Context, sliver: &SliverRow) -> Result<Vec<SliverStep>, JobError> {
    let vm = vm_of(cx, sliver)?;
    let users = slice_users(cx, sliver)?;
    cx.backend.update_users(&vm, &users)?;
    let seen = cx.backend.observe(&vm)?;
    let annotations = observe::annotate(sliver.annotations.value().clone(), &seen, &users);
    Ok(vec![
        SliverStep::Annotations(annotations),
        SliverStep::State(OperationalState::Ready),
    ])
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
