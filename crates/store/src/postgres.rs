//! A PostgreSQL ledger, shared by a firm's desks. The client (rust-postgres, blocking) lives
//! on a thread of its own and statements are handed to it, so the ledger can be used from
//! inside the run's async tasks as the SQLite one is.

use std::collections::HashMap;
use std::sync::mpsc;
use std::sync::Mutex;
use std::time::Duration;

use postgres::types::{ToSql, Type};
use postgres::{Client, Config, NoTls};

use super::row::{retry_window, DbError, Row, Val, ARTIFACT_INSERT};

pub struct Pg {
    jobs: Mutex<mpsc::Sender<Job>>,
}

/// `?N` parameters as PostgreSQL writes them: `$N`.
fn dollar(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '?' && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

fn pg_err(e: postgres::Error) -> DbError {
    // The server's own message (`db_error`) says what is wrong; the wrapper alone does not.
    let detail = e
        .as_db_error()
        .map(|d| d.message().to_string())
        .unwrap_or_else(|| {
            let mut s = e.to_string();
            let mut src = std::error::Error::source(&e);
            while let Some(x) = src {
                s.push_str(&format!(": {x}"));
                src = x.source();
            }
            s
        });
    DbError::Postgres(detail)
}

/// A null of whatever type the statement wants: a null read back from SQLite (adopting an
/// old store) has no type of its own.
#[derive(Debug)]
struct Null;

impl ToSql for Null {
    fn to_sql(
        &self,
        _: &Type,
        _: &mut postgres::types::private::BytesMut,
    ) -> Result<postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        Ok(postgres::types::IsNull::Yes)
    }
    fn accepts(_: &Type) -> bool {
        true
    }
    postgres::types::to_sql_checked!();
}

fn boxed(params: &[Val]) -> Vec<Box<dyn ToSql + Sync + Send>> {
    params
        .iter()
        .map(|v| -> Box<dyn ToSql + Sync + Send> {
            match v {
                Val::Int(i) => Box::new(*i),
                Val::Text(t) => Box::new(t.clone()),
                Val::NullInt | Val::NullText => Box::new(Null),
            }
        })
        .collect()
}

fn refs(b: &[Box<dyn ToSql + Sync + Send>]) -> Vec<&(dyn ToSql + Sync)> {
    b.iter()
        .map(|x| x.as_ref() as &(dyn ToSql + Sync))
        .collect()
}

fn row(r: &postgres::Row) -> Row {
    let mut out = Vec::with_capacity(r.len());
    for (i, c) in r.columns().iter().enumerate() {
        let t = c.type_();
        let v = if *t == Type::INT8 {
            r.try_get::<_, Option<i64>>(i).ok().flatten().map(Val::Int)
        } else if *t == Type::INT4 {
            r.try_get::<_, Option<i32>>(i)
                .ok()
                .flatten()
                .map(|x| Val::Int(x as i64))
        } else if *t == Type::INT2 {
            r.try_get::<_, Option<i16>>(i)
                .ok()
                .flatten()
                .map(|x| Val::Int(x as i64))
        } else if *t == Type::BOOL {
            r.try_get::<_, Option<bool>>(i)
                .ok()
                .flatten()
                .map(|x| Val::Int(x as i64))
        } else {
            r.try_get::<_, Option<String>>(i)
                .ok()
                .flatten()
                .map(Val::Text)
        };
        out.push(v.unwrap_or(Val::NullText));
    }
    Row(out)
}

/// The password `~/.pgpass` (or the file `PGPASSFILE` names) gives for this connection, read
/// as libpq reads it: `host:port:database:user:password` lines, `*` matching anything, `\:`
/// and `\\` escaped, the first matching line winning, and the file ignored unless only its
/// owner can read it.
fn pgpass_for(config: &Config) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PGPASSFILE")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".pgpass")))?;
    let meta = std::fs::metadata(&path).ok()?;
    if !meta.is_file() || meta.permissions().mode() & 0o077 != 0 {
        return None;
    }
    let text = std::fs::read_to_string(&path).ok()?;
    let host = match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(h)) => h.clone(),
        _ => "localhost".to_string(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let user = config.get_user().unwrap_or_default().to_string();
    let db = config
        .get_dbname()
        .map_or_else(|| user.clone(), str::to_string);
    pgpass_lookup(&text, [&host, &port, &db, &user])
}

fn pgpass_lookup(text: &str, want: [&str; 4]) -> Option<String> {
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let mut fields = vec![String::new()];
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    if let Some(n) = chars.next() {
                        fields.last_mut()?.push(n);
                    }
                }
                ':' if fields.len() < 5 => fields.push(String::new()),
                // An unescaped `:` ends the password, as libpq reads it.
                ':' => break,
                c => fields.last_mut()?.push(c),
            }
        }
        if fields.len() != 5 {
            continue;
        }
        if fields[..4]
            .iter()
            .zip(want)
            .all(|(f, w)| f == "*" || f == w)
        {
            return fields.pop();
        }
    }
    None
}

/// The TLS connector for `sslmode=require`: the CA certificates of `PGSSLROOTCERT` (a PEM
/// file, as libpq reads it) or else the system's, TLS 1.2 or 1.3.
fn tls_connector() -> Result<tokio_postgres_rustls::MakeRustlsConnect, DbError> {
    use rustls::pki_types::{pem::PemObject, CertificateDer};
    let mut roots = rustls::RootCertStore::empty();
    match std::env::var_os("PGSSLROOTCERT") {
        Some(path) => {
            let certs = CertificateDer::pem_file_iter(&path)
                .and_then(|it| it.collect::<Result<Vec<_>, _>>())
                .map_err(|e| {
                    DbError::Postgres(format!(
                        "PGSSLROOTCERT `{}` is not a readable PEM file of certificates: {e}",
                        std::path::Path::new(&path).display()
                    ))
                })?;
            for c in certs {
                roots.add(c).map_err(|e| {
                    DbError::Postgres(format!("a certificate in PGSSLROOTCERT is not usable: {e}"))
                })?;
            }
        }
        None => {
            for c in rustls_native_certs::load_native_certs().certs {
                let _ = roots.add(c);
            }
        }
    }
    if roots.is_empty() {
        return Err(DbError::Postgres(
            "sslmode=require, but no CA certificate was found to check the server's against; name the firm's CA file in PGSSLROOTCERT".into(),
        ));
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| DbError::Postgres(format!("TLS: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// A statement's turn on the ledger's thread: run it on the connection, or give up with the
/// error that says why the ledger cannot be had.
enum Turn<'a> {
    Run(&'a mut Client),
    GiveUp(DbError),
}

/// A statement handed to the ledger's thread; true once it has its answer, false when the
/// connection was lost before it had one (it is then run again on a new connection).
type Job = Box<dyn FnMut(Turn<'_>) -> bool + Send>;

/// Whether `e` means the connection is gone (not that the statement was wrong): the
/// socket closed, or the server shutting down or not yet accepting connections.
fn lost(e: &postgres::Error, c: &Client) -> bool {
    if e.is_closed() || c.is_closed() {
        return true;
    }
    match e.code() {
        Some(code) => {
            let c = code.code();
            c.starts_with("08") || matches!(c, "57P01" | "57P02" | "57P03")
        }
        // No server error: lost only if the socket failed under the statement (a statement
        // the client itself refused, a row count or a type, is no loss to wait out).
        None => {
            let mut cause: Option<&(dyn std::error::Error + 'static)> =
                std::error::Error::source(e);
            while let Some(c) = cause {
                if c.is::<std::io::Error>() {
                    return true;
                }
                cause = c.source();
            }
            false
        }
    }
}

/// What it takes to open a connection, again when one is lost.
struct Dial {
    config: Config,
    tls: Option<tokio_postgres_rustls::MakeRustlsConnect>,
}

impl Dial {
    fn open(&self) -> Result<Client, postgres::Error> {
        match &self.tls {
            Some(tls) => self.config.connect(tls.clone()),
            None => self.config.connect(NoTls),
        }
    }
}

/// The ledger's thread: runs each statement in turn, and when the connection is lost,
/// connects again with backoff (50 ms doubling to 1 s) for up to `window` before the
/// statement fails. Once a statement has failed that way, the next fail at the first refused
/// attempt (a run does not wait the window out for every statement) until a connection is
/// made again.
fn serve(dial: Dial, first: Client, jobs: mpsc::Receiver<Job>, window: Duration) {
    let mut client = Some(first);
    let mut down = false;
    for mut job in jobs {
        let started = std::time::Instant::now();
        let mut pause = Duration::from_millis(50);
        let mut why = String::new();
        loop {
            if client.as_ref().is_none_or(Client::is_closed) {
                client = None;
                match dial.open() {
                    Ok(c) => {
                        client = Some(c);
                        down = false;
                    }
                    Err(e) => why = pg_err(e).to_string(),
                }
            }
            if let Some(c) = client.as_mut() {
                if job(Turn::Run(c)) {
                    break;
                }
                client = None;
                why = "the connection was lost".into();
                continue;
            }
            if down || started.elapsed() >= window {
                let tried = if down {
                    "still unreachable".to_string()
                } else {
                    format!("tried again for {:.0} s", started.elapsed().as_secs_f64())
                };
                down = true;
                job(Turn::GiveUp(DbError::Lost(format!("{why} ({tried})"))));
                break;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_secs(1));
        }
    }
}

impl Pg {
    /// Connects (within `timeout`), on the client's own thread. The error names the URL
    /// with its password hidden. A connection lost later is made again (see [`serve`]).
    pub fn connect(url: &str, timeout: Duration) -> Result<Pg, DbError> {
        let mut config: Config = url.parse().map_err(|e: postgres::Error| {
            DbError::Postgres(format!("not a PostgreSQL URL: {e}"))
        })?;
        if config.get_password().is_none() {
            if let Some(p) = std::env::var_os("PGPASSWORD") {
                config.password(p.to_string_lossy().as_bytes());
            } else if let Some(p) = pgpass_for(&config) {
                config.password(p.as_bytes());
            }
        }
        config.connect_timeout(timeout);
        config.application_name("lexrun");
        // `sslmode=require`: TLS, with the server's certificate checked against the system's
        // roots or the CA file `PGSSLROOTCERT` names, and its name against the host.
        let tls = match config.get_ssl_mode() {
            postgres::config::SslMode::Require => Some(tls_connector()?),
            _ => None,
        };
        let dial = Dial { config, tls };
        let window = retry_window();
        let (tx, rx) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), DbError>>();
        std::thread::Builder::new()
            .name("lexrun-ledger".into())
            .spawn(move || match dial.open() {
                Ok(c) => {
                    let _ = ready_tx.send(Ok(()));
                    serve(dial, c, rx, window);
                }
                Err(e) => {
                    let _ = ready_tx.send(Err(pg_err(e)));
                }
            })
            .map_err(|e| DbError::Postgres(format!("cannot start the ledger's thread: {e}")))?;
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(Pg {
                jobs: Mutex::new(tx),
            }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(DbError::Postgres("the ledger's thread stopped".into())),
        }
    }

    /// Runs `f` with the client on its thread and waits for the answer. `f` may run more
    /// than once: when the connection is lost under it, it runs again on a new one (a
    /// transaction cut off before its commit was rolled back by the server).
    fn with<R: Send + 'static>(
        &self,
        f: impl Fn(&mut Client) -> Result<R, postgres::Error> + Send + 'static,
    ) -> Result<R, DbError> {
        let (tx, rx) = mpsc::sync_channel(1);
        let job: Job = Box::new(move |turn| match turn {
            Turn::Run(c) => match f(c) {
                Err(e) if lost(&e, c) => false,
                r => {
                    let _ = tx.send(r.map_err(pg_err));
                    true
                }
            },
            Turn::GiveUp(e) => {
                let _ = tx.send(Err(e));
                true
            }
        });
        self.jobs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .send(job)
            .map_err(|_| DbError::Lost("the ledger's thread stopped".into()))?;
        rx.recv()
            .map_err(|_| DbError::Lost("the ledger's thread stopped".into()))?
    }

    pub fn batch(&self, sql: &str) -> Result<(), DbError> {
        let sql = sql.to_string();
        self.with(move |c| c.batch_execute(&sql))
    }

    pub fn exec(&self, sql: &str, params: Vec<Val>) -> Result<u64, DbError> {
        let sql = dollar(sql);
        self.with(move |c| {
            let b = boxed(&params);
            c.execute(sql.as_str(), &refs(&b))
        })
    }

    pub fn query(&self, sql: &str, params: Vec<Val>) -> Result<Vec<Row>, DbError> {
        let sql = dollar(sql);
        self.with(move |c| {
            let b = boxed(&params);
            Ok(c.query(sql.as_str(), &refs(&b))?.iter().map(row).collect())
        })
    }

    pub fn transaction(&self, stmts: Vec<(String, Vec<Val>)>) -> Result<(), DbError> {
        self.with(move |c| {
            let mut tx = c.transaction()?;
            for (sql, p) in &stmts {
                let b = boxed(p);
                tx.execute(dollar(sql).as_str(), &refs(&b))?;
            }
            tx.commit()
        })
    }

    /// What `Db::fold_ints` does, on PostgreSQL: `fold` is the starting value and the step.
    pub fn fold_ints<T: Send + 'static>(
        &self,
        sql: &str,
        params: Vec<Val>,
        fold: (T, fn(&mut T, i64)),
    ) -> Result<T, DbError> {
        use postgres::fallible_iterator::FallibleIterator;
        let (acc, f) = fold;
        let sql = dollar(sql);
        // Folded again from the start when the connection is lost midway: the first rows are
        // then folded twice, which a fold that inserts into a set (the fingerprint filter)
        // does not mind.
        let acc = Mutex::new(Some(acc));
        self.with(move |c| {
            let b = boxed(&params);
            let mut held = acc.lock().unwrap_or_else(|p| p.into_inner());
            // Taken only by the run that answers, after which none follows.
            let acc = held.as_mut().expect("the fold is answered once");
            let mut rows = c.query_raw(sql.as_str(), refs(&b))?;
            while let Some(r) = rows.next()? {
                f(acc, r.get::<_, i64>(0));
            }
            Ok(held.take().expect("held"))
        })
    }

    pub fn insert_artifact(&self, row: Vec<Val>, fps: &[u64]) -> Result<i64, DbError> {
        let fps: Vec<i64> = fps.iter().map(|f| *f as i64).collect();
        self.with(move |c| {
            let mut tx = c.transaction()?;
            // Artifacts are written one at a time across every desk, so that ids become
            // visible in order and a fingerprint filter that has seen id N has seen all below.
            tx.execute("SELECT pg_advisory_xact_lock(7265787275)", &[])?;
            let b = boxed(&row);
            let sql = format!("{} RETURNING id", dollar(ARTIFACT_INSERT));
            let id: i64 = tx.query_one(sql.as_str(), &refs(&b))?.get(0);
            tx.execute(
                "INSERT INTO shingles (fp, artifact) SELECT DISTINCT unnest($1::bigint[]), $2::bigint ON CONFLICT DO NOTHING",
                &[&fps, &id],
            )?;
            tx.commit()?;
            Ok(id)
        })
    }

    pub fn shingle_hits(&self, fps: &[u64]) -> Result<HashMap<i64, u32>, DbError> {
        let fps: Vec<i64> = fps.iter().map(|f| *f as i64).collect();
        self.with(move |c| {
            let rows = c.query(
                "SELECT artifact, COUNT(*) FROM shingles WHERE fp = ANY($1) GROUP BY artifact",
                &[&fps],
            )?;
            Ok(rows
                .iter()
                .map(|r| (r.get::<_, i64>(0), r.get::<_, i64>(1) as u32))
                .collect())
        })
    }

    pub fn fingerprint_totals(&self, ids: &[i64]) -> Result<HashMap<i64, i64>, DbError> {
        let ids = ids.to_vec();
        self.with(move |c| {
            let rows = c.query(
                "SELECT id, fingerprints FROM artifacts WHERE id = ANY($1)",
                &[&ids],
            )?;
            Ok(rows
                .iter()
                .map(|r| (r.get::<_, i64>(0), r.get::<_, i64>(1)))
                .collect())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgpass_lines_are_read_as_libpq_reads_them() {
        let file = "# comment\n\
                    other.host:5432:lexrun:lexrun:wrong\n\
                    db.firm.example:*:lexrun:lexrun:pa\\:ss\n\
                    *:*:*:*:fallback\n";
        assert_eq!(
            pgpass_lookup(file, ["db.firm.example", "5432", "lexrun", "lexrun"]).as_deref(),
            Some("pa:ss")
        );
        assert_eq!(
            pgpass_lookup(file, ["elsewhere", "5433", "x", "y"]).as_deref(),
            Some("fallback")
        );
        assert_eq!(pgpass_lookup("h:1:d:u\n", ["h", "1", "d", "u"]), None);
        assert_eq!(
            pgpass_lookup("h:1:d:u:pw:extra\r\n", ["h", "1", "d", "u"]).as_deref(),
            Some("pw")
        );
    }

    #[test]
    fn parameters_are_numbered_the_postgres_way() {
        assert_eq!(
            dollar("SELECT a FROM t WHERE b = ?1 AND c = ?12"),
            "SELECT a FROM t WHERE b = $1 AND c = $12"
        );
    }
}
