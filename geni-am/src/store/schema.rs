//! Diesel table definitions, matching `geni-am/migrations/`.

diesel::table! {
    slices (urn) {
        urn -> Text,
        created_at -> BigInt,
        credential_expires -> BigInt,
        shut_down -> Bool,
        shut_down_by -> Nullable<Text>,
        shut_down_reason -> Nullable<Text>,
    }
}

diesel::table! {
    requests (id) {
        id -> Text,
        slice_urn -> Text,
        created_at -> BigInt,
        document -> Text,
    }
}

diesel::table! {
    components (id) {
        id -> Text,
        name -> Text,
        cpus -> BigInt,
        memory_mb -> BigInt,
        max_vms -> BigInt,
        exclusive -> Bool,
        available -> Bool,
        details -> Text,
        updated_at -> BigInt,
    }
}

diesel::table! {
    slivers (urn) {
        urn -> Text,
        slice_urn -> Text,
        request_id -> Text,
        client_id -> Text,
        component_id -> Text,
        sliver_type -> Text,
        disk_image -> Nullable<Text>,
        cpus -> BigInt,
        memory_mb -> BigInt,
        exclusive -> Bool,
        allocation_state -> Text,
        operational_state -> Text,
        expires_at -> BigInt,
        error -> Text,
        annotations -> Text,
        created_at -> BigInt,
        version -> BigInt,
        deleted_at -> Nullable<BigInt>,
        disk_gb -> Nullable<BigInt>,
        cores -> Nullable<BigInt>,
        ram_mb -> Nullable<BigInt>,
        plan -> Nullable<Text>,
    }
}

diesel::table! {
    slice_users (slice_urn, user_urn) {
        slice_urn -> Text,
        user_urn -> Text,
        keys -> Text,
        updated_at -> BigInt,
    }
}

diesel::table! {
    jobs (id) {
        id -> Text,
        seq -> BigInt,
        kind -> Text,
        slice_urn -> Text,
        sliver_urn -> Nullable<Text>,
        payload -> Text,
        state -> Text,
        attempts -> BigInt,
        run_after -> BigInt,
        lease_owner -> Nullable<Text>,
        lease_expires -> Nullable<BigInt>,
        last_error -> Text,
        created_at -> BigInt,
        updated_at -> BigInt,
    }
}

diesel::table! {
    events (id) {
        id -> Text,
        seq -> BigInt,
        at -> BigInt,
        slice_urn -> Nullable<Text>,
        sliver_urn -> Nullable<Text>,
        kind -> Text,
        detail -> Text,
    }
}

diesel::table! {
    link_networks (tag) {
        tag -> Text,
        slice_urn -> Text,
        name -> Text,
        handle -> Text,
        created_at -> BigInt,
        vlan_tag -> Nullable<BigInt>,
    }
}

diesel::table! {
    backend_outage (id) {
        id -> BigInt,
        since -> Nullable<BigInt>,
        detail -> Text,
        updated_at -> BigInt,
    }
}

diesel::table! {
    link_ranges (id) {
        id -> BigInt,
        ranges -> Nullable<Text>,
        updated_at -> BigInt,
    }
}

diesel::table! {
    drain (id) {
        id -> BigInt,
        since -> Nullable<BigInt>,
        operator -> Text,
        reason -> Text,
        updated_at -> BigInt,
    }
}

// The poller's read of slivers waiting for the backend asks the jobs of
// each candidate in a subquery.
diesel::allow_tables_to_appear_in_same_query!(jobs, slivers);
