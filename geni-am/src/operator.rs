//! The operator's endpoint (`[operator]`): a small HTTP server of its own,
//! on its own thread and port, apart from the AM API, serving
//! `/metrics` (Prometheus text format, see [`crate::telemetry`]),
//! `/healthz` and `/readyz`, and a read-only dashboard (`/`, and
//! `/slices/<urlencoded URN>` per slice). Plain HTTP on loopback by
//! default; with `tls_cert`/`tls_key` HTTPS, optionally requiring client
//! certificates from `client_roots`; with `token_file` a bearer token on
//! every request.
//!
//! Everything shown is read from the store when asked (bounded,
//! aggregate queries for the metrics and the front page), so every
//! process sharing a PostgreSQL store shows the same aggregate, and
//! nothing here writes. Credentials, keys and signatures are never
//! stored, so never shown.

mod dashboard;
mod gauges;
mod routes;
mod tls;

use crate::config::OperatorConfig;
use crate::core::Aggregate;
use crate::store::Store;
use actix_web::dev::ServerHandle;
use actix_web::{App, HttpServer, web};
use std::net::{SocketAddr, TcpListener};

/// Why the endpoint could not start.
#[derive(Debug, thiserror::Error)]
pub enum OperatorError {
    /// Binding or running failed.
    #[error("operator.listen {listen}: {source}")]
    Io {
        /// The configured address.
        listen: String,
        /// The operating system error.
        source: std::io::Error,
    },
    /// The TLS files or client roots cannot be used.
    #[error("operator.{key}: {problem}")]
    Tls {
        /// The key of the file.
        key: &'static str,
        /// What is wrong.
        problem: String,
    },
}

/// What the endpoint reads.
#[derive(Clone)]
pub struct Sources {
    /// The aggregate the API serves: its store (the request pool, whose
    /// use `/metrics` shows) and its manifests.
    pub aggregate: Aggregate,
}

impl Sources {
    /// The store.
    fn store(&self) -> &Store {
        self.aggregate.store()
    }
}

/// What a route answers: status, kind and body (built on the blocking
/// pool, turned into an HTTP response by the routes).
pub(crate) struct Page {
    status: actix_web::http::StatusCode,
    content: Content,
    body: String,
}

/// What a [`Page`] holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Content {
    /// Plain text.
    Text,
    /// An HTML page.
    Html,
    /// The metrics' text format.
    Metrics,
}

impl Page {
    /// A plain-text page.
    fn text(status: actix_web::http::StatusCode, body: String) -> Page {
        Page {
            status,
            content: Content::Text,
            body,
        }
    }

    /// An HTML page.
    fn html(status: actix_web::http::StatusCode, body: String) -> Page {
        Page {
            status,
            content: Content::Html,
            body,
        }
    }
}

/// The endpoint holding its port, not yet answering.
pub struct Bound {
    listener: TcpListener,
    tls: Option<openssl::ssl::SslAcceptorBuilder>,
    token: Option<String>,
    listen: String,
}

/// Binds the endpoint of `config` and loads its TLS files and token, so a
/// process that cannot have the port stops before it builds anything.
pub fn bind(config: &OperatorConfig) -> Result<Bound, OperatorError> {
    let tls = tls::acceptor(config)?;
    let token = match &config.token_file {
        Some(file) => Some(
            crate::config::operator::read_token(file).map_err(|problem| OperatorError::Tls {
                key: "token_file",
                problem,
            })?,
        ),
        None => None,
    };
    let listener = TcpListener::bind(&config.listen).map_err(|source| OperatorError::Io {
        listen: config.listen.clone(),
        source,
    })?;
    Ok(Bound {
        listener,
        tls,
        token,
        listen: config.listen.clone(),
    })
}

/// The running endpoint; dropping it stops it.
pub struct Running {
    /// The address it listens on.
    pub addr: SocketAddr,
    handle: ServerHandle,
    thread: Option<std::thread::JoinHandle<std::io::Result<()>>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(thread) = self.thread.take() {
            actix_web::rt::System::new().block_on(self.handle.stop(true));
            let _ = thread.join();
        }
    }
}

impl Bound {
    /// Starts answering on a thread of its own, reading `sources`.
    pub fn spawn(self, sources: Sources) -> Result<Running, OperatorError> {
        let io = |source| OperatorError::Io {
            listen: self.listen.clone(),
            source,
        };
        let addr = self.listener.local_addr().map_err(io)?;
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        let state = web::Data::new(routes::State {
            sources,
            token: self.token,
        });
        let (listener, tls) = (self.listener, self.tls);
        let (sender, receiver) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("operator".into())
            .spawn(move || {
                actix_web::rt::System::new().block_on(async move {
                    let server = HttpServer::new(move || {
                        App::new()
                            .app_data(state.clone())
                            .default_service(web::to(routes::route))
                    })
                    .workers(1)
                    .shutdown_timeout(1);
                    let server = match tls {
                        Some(tls) => server.listen_openssl(listener, tls)?,
                        None => server.listen(listener)?,
                    }
                    .run();
                    let _ = sender.send(server.handle());
                    server.await
                })
            })
            .map_err(io)?;
        let Ok(handle) = receiver.recv() else {
            let error = thread.join().ok().and_then(Result::err);
            return Err(io(error.unwrap_or_else(|| {
                std::io::Error::other("the operator endpoint stopped before listening")
            })));
        };
        tracing::info!(url = %format!("{scheme}://{addr}/"), "operator endpoint serving");
        Ok(Running {
            addr,
            handle,
            thread: Some(thread),
        })
    }
}
