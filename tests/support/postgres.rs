//! A real PostgreSQL server for the tests of the shared ledger: `initdb` into a temporary
//! folder, started on 127.0.0.1 on a free port, stopped (and its folder removed) when dropped.
//! The programs are Debian's `postgresql` package (`scripts/install-tools` installs it), found
//! under `/usr/lib/postgresql/*/bin` or through `LEXRUN_PG_BIN`. PostgreSQL refuses to run as
//! root, so as root the server runs as the unprivileged `postgres` user the package creates.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub struct Postgres {
    bin: PathBuf,
    data: PathBuf,
    /// The temporary folder holding the cluster and its socket.
    _root: tempfile::TempDir,
    pub port: u16,
    as_user: Option<String>,
}

fn bin_dir() -> PathBuf {
    if let Some(b) = std::env::var_os("LEXRUN_PG_BIN") {
        return PathBuf::from(b);
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path().join("bin"))
                .filter(|b| b.join("initdb").is_file())
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found.pop().unwrap_or_else(|| {
        panic!("PostgreSQL's programs are missing: run scripts/install-tools (it installs Debian's `postgresql`), or set LEXRUN_PG_BIN to the folder holding initdb and postgres")
    })
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and touches no memory.
    unsafe { libc::geteuid() == 0 }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

impl Postgres {
    /// A new cluster, running, with a database `lexrun` the current user (or `postgres`,
    /// as root) owns; trust authentication on 127.0.0.1 only.
    pub fn start() -> Postgres {
        Self::start_with(false)
    }

    /// [`Postgres::start`], with TLS on: a certificate for 127.0.0.1 signed by a CA of the
    /// test's own (made with `openssl`), whose certificate is at [`Postgres::ca`].
    pub fn start_tls() -> Postgres {
        Self::start_with(true)
    }

    /// The test CA's certificate (PEM), for a server started with TLS.
    pub fn ca(&self) -> PathBuf {
        self._root.path().join("tls/ca.crt")
    }

    fn start_with(tls: bool) -> Postgres {
        let bin = bin_dir();
        let root = tempfile::Builder::new()
            .prefix("lexrun-pg-")
            .tempdir()
            .expect("temp dir");
        let data = root.path().join("data");
        let as_user = is_root().then(|| "postgres".to_string());
        let mut options = String::new();
        if tls {
            let dir = root.path().join("tls");
            make_certificates(&dir);
            options = format!(
                " -c ssl=on -c ssl_cert_file={0}/server.crt -c ssl_key_file={0}/server.key",
                dir.display()
            );
        }
        if let Some(u) = &as_user {
            let st = Command::new("chown")
                .arg("-R")
                .arg(format!("{u}:"))
                .arg(root.path())
                .status()
                .expect("chown runs");
            assert!(st.success(), "cannot give the cluster's folder to {u}");
        }
        let mut pg = Postgres {
            bin,
            data,
            _root: root,
            port: 0,
            as_user,
        };
        let out = pg
            .command("initdb")
            .args([
                "-A",
                "trust",
                "-U",
                "lexrun",
                "--no-sync",
                "-E",
                "UTF8",
                "-D",
            ])
            .arg(&pg.data)
            .output()
            .expect("initdb runs");
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        if tls {
            // TCP connections only over TLS, so a client that connects spoke TLS.
            std::fs::write(
                pg.data.join("pg_hba.conf"),
                "local all all trust\nhostssl all all 127.0.0.1/32 trust\n",
            )
            .unwrap();
        }
        // A port another process takes between the check and the bind makes the server
        // fail to start: try again on another.
        for _ in 0..5 {
            pg.port = free_port();
            let log = pg.data.join("server.log");
            let st = pg
                .command("pg_ctl")
                .args(["-w", "-t", "60", "-D"])
                .arg(&pg.data)
                .arg("-l")
                .arg(&log)
                .arg("-o")
                .arg(format!(
                    "-h 127.0.0.1 -p {} -k {} -F -c fsync=off -c max_connections=40{options}",
                    pg.port,
                    pg.data.display()
                ))
                .arg("start")
                .stdout(Stdio::null())
                .status()
                .expect("pg_ctl runs");
            if st.success() {
                pg.create_db("lexrun");
                return pg;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        let log = std::fs::read_to_string(pg.data.join("server.log")).unwrap_or_default();
        panic!("PostgreSQL did not start: {log}");
    }

    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        match &self.as_user {
            Some(u) => {
                let mut c = Command::new("runuser");
                c.args(["-u", u, "--"]).arg(path);
                c.current_dir("/");
                c
            }
            None => Command::new(path),
        }
    }

    /// A new, empty database on the server.
    pub fn create_db(&self, name: &str) {
        let started = Instant::now();
        loop {
            let out = self
                .command("createdb")
                .args([
                    "-h",
                    "127.0.0.1",
                    "-p",
                    &self.port.to_string(),
                    "-U",
                    "lexrun",
                    name,
                ])
                .output()
                .expect("createdb runs");
            if out.status.success() {
                return;
            }
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                started.elapsed() < Duration::from_secs(30) && err.contains("starting up"),
                "createdb {name}: {err}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The URL of a database on the server.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://lexrun@127.0.0.1:{}/{db}", self.port)
    }

    pub fn data_dir(&self) -> &Path {
        &self.data
    }

    /// Starts the stopped server again, on its port, with its data.
    pub fn start_again(&self) {
        let st = self
            .command("pg_ctl")
            .args(["-w", "-t", "60", "-D"])
            .arg(&self.data)
            .arg("-l")
            .arg(self.data.join("server.log"))
            .arg("-o")
            .arg(format!(
                "-h 127.0.0.1 -p {} -k {} -F -c fsync=off -c max_connections=40",
                self.port,
                self.data.display()
            ))
            .arg("start")
            .stdout(Stdio::null())
            .status()
            .expect("pg_ctl runs");
        assert!(st.success(), "PostgreSQL did not start again");
    }

    /// The rows `sql` gives in database `db`, one line each, columns separated by `|`.
    pub fn query(&self, db: &str, sql: &str) -> Vec<String> {
        let out = self
            .command("psql")
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "lexrun",
            ])
            .args(["-d", db, "-At", "-c", sql])
            .output()
            .expect("psql runs");
        assert!(
            out.status.success(),
            "psql {sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Stops the server now (as `Drop` would), for tests of a server that is down.
    pub fn stop(&self) {
        let _ = self
            .command("pg_ctl")
            .args(["-w", "-m", "immediate", "-D"])
            .arg(&self.data)
            .arg("stop")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// A CA and a server certificate for 127.0.0.1 signed by it, in `dir`.
fn make_certificates(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("san.ext"), "subjectAltName=IP:127.0.0.1\n").unwrap();
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    for args in [
        [
            &["req", "-x509"][..],
            &ec,
            &[
                "-keyout",
                "ca.key",
                "-out",
                "ca.crt",
                "-days",
                "2",
                "-subj",
                "/CN=lexrun test CA",
            ],
        ]
        .concat(),
        [
            &["req"][..],
            &ec,
            &[
                "-keyout",
                "server.key",
                "-out",
                "server.csr",
                "-subj",
                "/CN=127.0.0.1",
            ],
        ]
        .concat(),
        vec![
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-days",
            "2",
            "-extfile",
            "san.ext",
        ],
    ] {
        let out = Command::new("openssl")
            .args(&args)
            .current_dir(dir)
            .output()
            .expect("openssl runs (Debian's `openssl`)");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        dir.join("server.key"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
    }
}
