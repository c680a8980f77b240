//! Connection admission: how many client connections are open, in total
//! and per client certificate, against `[server] max_connections` and
//! `max_connections_per_client`. Each connection accepted after the TLS
//! handshake takes a [`Slot`] that it keeps until it closes; a connection
//! beyond a cap holds no slot and has its first request refused (503,
//! then closed), so one client's idle or trickling connections cannot
//! lock the others out.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// The open connections of the whole server, shared by its workers.
#[derive(Debug)]
pub(super) struct Connections {
    max_total: usize,
    max_per_client: usize,
    open: Mutex<Open>,
}

/// What is open right now.
#[derive(Debug, Default)]
struct Open {
    total: usize,
    per_client: HashMap<String, usize>,
}

/// A connection's place in the counts, given back when it is dropped
/// (with the connection's data, when the connection closes).
#[derive(Debug)]
pub(super) struct Slot {
    connections: Arc<Connections>,
    client: Option<String>,
}

/// Why a connection beyond a cap is not served: what the client is told.
#[derive(Debug)]
pub(super) struct OverCapacity(pub(super) String);

impl Connections {
    /// Counts against `max_total` connections, `max_per_client` of them
    /// from one client certificate.
    pub(super) fn new(max_total: usize, max_per_client: usize) -> Arc<Connections> {
        Arc::new(Connections {
            max_total,
            max_per_client,
            open: Mutex::new(Open::default()),
        })
    }

    /// Admits a connection from `client` (the verified certificate's
    /// identity, or `None` when it did not verify and only counts in the
    /// total): its slot, held while the connection is open, or which cap
    /// it is beyond.
    pub(super) fn admit(self: &Arc<Self>, client: Option<&str>) -> Result<Slot, OverCapacity> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if open.total >= self.max_total {
            return Err(OverCapacity(format!(
                "the aggregate serves at most {} connections at once (server.max_connections); try again shortly",
                self.max_total
            )));
        }
        if let Some(client) = client {
            let mine = open.per_client.entry(client.to_owned()).or_default();
            if *mine >= self.max_per_client {
                return Err(OverCapacity(format!(
                    "{client} already has {} connections open, the most one client may hold (server.max_connections_per_client); close some or reuse them with keep-alive",
                    self.max_per_client
                )));
            }
            *mine += 1;
        }
        open.total += 1;
        Ok(Slot {
            connections: Arc::clone(self),
            client: client.map(str::to_owned),
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self
            .connections
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        open.total = open.total.saturating_sub(1);
        if let Some(client) = &self.client
            && let Some(mine) = open.per_client.get_mut(client)
        {
            *mine = mine.saturating_sub(1);
            if *mine == 0 {
                open.per_client.remove(client);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(admission: &Result<Slot, OverCapacity>) -> Option<&str> {
        admission
            .as_ref()
            .err()
            .map(|OverCapacity(reason)| reason.as_str())
    }

    #[test]
    fn one_client_beyond_its_cap_is_refused_while_another_is_admitted() {
        let connections = Connections::new(10, 2);
        let held: Vec<_> = (0..2).map(|_| connections.admit(Some("mallory"))).collect();
        assert!(held.iter().all(|a| refused(a).is_none()));
        let third = connections.admit(Some("mallory"));
        assert!(
            refused(&third).is_some_and(|r| r.contains("max_connections_per_client")),
            "{third:?}"
        );
        assert!(refused(&connections.admit(Some("alice"))).is_none());
    }

    #[test]
    fn the_total_cap_counts_every_client_and_a_closed_connection_frees_its_slot() {
        let connections = Connections::new(2, 2);
        let first = connections.admit(Some("alice"));
        let _second = connections.admit(None);
        let third = connections.admit(Some("bob"));
        assert!(
            refused(&third).is_some_and(|r| r.contains("server.max_connections")),
            "{third:?}"
        );
        drop(first);
        assert!(refused(&connections.admit(Some("bob"))).is_none());
    }
}
