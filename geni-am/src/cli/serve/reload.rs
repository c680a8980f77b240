//! SIGHUP while `serve` runs (`systemctl reload geni-am`): the trust roots
//! directory is read again and, when it reads, its roots replace the old
//! ones in the one [`TrustStore`] that the TLS handshakes, the check of
//! each connection's client chain and the credential checks share, so that
//! users of a new clearinghouse are admitted, and those of a removed one
//! refused, without a restart. Verdicts cached under the old roots are not
//! used again (the roots get a new generation). A directory that does not
//! read (missing, empty, a malformed certificate) leaves the old roots in
//! force, and the error is logged.

use super::systemd;
use geni_credentials::TrustStore;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::signal::unix::{SignalKind, signal};

/// Starts the thread that reloads `trust` from `dir` on every SIGHUP. The
/// handler is installed before this returns, so a SIGHUP sent afterwards
/// never ends the process.
pub fn start(trust: Arc<TrustStore>, dir: PathBuf) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()?;
    let mut hangups = {
        let _entered = runtime.enter();
        signal(SignalKind::hangup())?
    };
    std::thread::Builder::new()
        .name("sighup".into())
        .spawn(move || {
            runtime.block_on(async move {
                while hangups.recv().await.is_some() {
                    reload(&trust, &dir);
                }
            });
        })?;
    Ok(())
}

/// Replaces the roots of `trust` by those of `dir`, or keeps them and logs why not.
fn reload(trust: &TrustStore, dir: &Path) {
    systemd::reloading();
    match TrustStore::from_dir(dir) {
        Ok(fresh) => {
            let roots = fresh.roots().len();
            trust.replace(fresh);
            tracing::info!(dir = %dir.display(), roots, "trust roots reloaded");
        }
        Err(error) => {
            tracing::error!(
                dir = %dir.display(),
                roots = trust.roots().len(),
                "trust roots not reloaded, the previous roots stay in force: {error}"
            );
        }
    }
    systemd::ready();
}
