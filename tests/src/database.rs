//! Where a test aggregate keeps its state: a SQLite file in its directory,
//! or a fresh PostgreSQL database created on the server of `DATABASE_URL`
//! for one test and dropped afterwards. Without `DATABASE_URL` the
//! PostgreSQL half of a suite is skipped loudly, unless
//! `GENI_AM_REQUIRE_ALL=1` makes that a failure (as `scripts/test.sh` does).

use diesel::{Connection, PgConnection, RunQueryDsl};

/// The store backing a test aggregate.
pub enum Store {
    /// A SQLite file in the aggregate's directory.
    Sqlite,
    /// A PostgreSQL database made for this test.
    Postgres(PgDatabase),
}

impl Store {
    /// The store kind named `kind` ("sqlite" or "postgres") for `test`, or
    /// None when PostgreSQL is not configured and not required.
    pub fn for_test(kind: &str, test: &str) -> Option<Store> {
        match kind {
            "sqlite" => Some(Store::Sqlite),
            "postgres" => PgDatabase::create(test).map(Store::Postgres),
            other => panic!("unknown store kind {other}"),
        }
    }

    /// The `[store] url` value, given the aggregate's directory name for SQLite.
    pub fn url(&self) -> String {
        match self {
            Store::Sqlite => "geni-am.sqlite".to_owned(),
            Store::Postgres(db) => db.url.clone(),
        }
    }
}

/// A PostgreSQL database that exists for the life of this value.
pub struct PgDatabase {
    admin_url: String,
    name: String,
    /// The URL of the database.
    pub url: String,
}

impl PgDatabase {
    /// Creates a database named after `test` on the server of
    /// `DATABASE_URL`; None (with a notice) when it is unset and
    /// `GENI_AM_REQUIRE_ALL` is not `1`.
    pub fn create(test: &str) -> Option<PgDatabase> {
        let Ok(admin_url) = std::env::var("DATABASE_URL") else {
            crate::missing_prerequisite(&format!(
                "{test}: DATABASE_URL is not set (the PostgreSQL half)"
            ));
            return None;
        };
        let suffix = uuid::Uuid::new_v4().simple().to_string();
        let name = format!("geni_e2e_{}_{}", sanitize(test), &suffix[..12]);
        let mut admin = PgConnection::establish(&admin_url).expect("DATABASE_URL connects");
        diesel::sql_query(format!("CREATE DATABASE \"{name}\""))
            .execute(&mut admin)
            .expect("CREATE DATABASE");
        let url = replace_database(&admin_url, &name);
        Some(PgDatabase {
            admin_url,
            name,
            url,
        })
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        if let Ok(mut admin) = PgConnection::establish(&self.admin_url) {
            let _ = diesel::sql_query(format!(
                "DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)",
                self.name
            ))
            .execute(&mut admin);
        }
    }
}

/// Lower-case letters, digits and `_` only, at most 30 characters.
fn sanitize(test: &str) -> String {
    test.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .take(30)
        .collect()
}

/// `url` with its database path replaced by `name` (query kept).
fn replace_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, format!("?{query}")),
        None => (url, String::new()),
    };
    let authority_end = base
        .find("://")
        .map(|scheme| scheme + 3)
        .and_then(|start| base[start..].find('/').map(|slash| start + slash))
        .unwrap_or(base.len());
    format!("{}/{name}{query}", &base[..authority_end])
}

#[cfg(test)]
mod tests {
    use super::replace_database;

    #[test]
    fn replace_database_keeps_server_and_query() {
        assert_eq!(
            replace_database("postgres://u:p@h:5432/postgres?sslmode=disable", "x"),
            "postgres://u:p@h:5432/x?sslmode=disable"
        );
        assert_eq!(replace_database("postgres://h", "x"), "postgres://h/x");
    }
}
