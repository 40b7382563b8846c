//! What a shell and `man` get from lexrun: completion scripts, the man page, and `help`.

use crate::support;

use std::process::Command;
use support::{lexrun, stdout};

#[test]
fn the_bash_completion_script_loads_and_completes_commands() {
    let o = lexrun(&["completions", "bash"]);
    assert_eq!(o.status.code(), Some(0));
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("lexrun.bash");
    std::fs::write(&script, &o.stdout).unwrap();
    let b = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source '{}' && complete -p lexrun && COMP_WORDS=(lexrun ver) COMP_CWORD=1 COMP_LINE='lexrun ver' COMP_POINT=10 && _lexrun lexrun ver lexrun && printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display()
        ))
        .output()
        .expect("bash runs");
    let out = String::from_utf8_lossy(&b.stdout);
    assert!(
        b.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&b.stderr)
    );
    assert!(out.starts_with("complete "), "{out}");
    assert!(out.lines().any(|l| l == "verify"), "{out}");
    for shell in ["zsh", "fish"] {
        let o = lexrun(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0));
        let text = stdout(&o);
        assert!(
            text.contains("lexrun") && text.contains("mcp"),
            "{shell}: {text}"
        );
    }
    let o = lexrun(&["completions", "tcsh"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "an unknown shell is a usage error"
    );
}

#[test]
fn man_renders_the_man_page() {
    let o = lexrun(&["man"]);
    assert_eq!(o.status.code(), Some(0));
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("lexrun.1");
    std::fs::write(&page, &o.stdout).unwrap();
    let m = Command::new("man")
        .arg("-l")
        .arg(&page)
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100")
        .output()
        .expect("man runs (scripts/install-tools installs man-db)");
    let text = String::from_utf8_lossy(&m.stdout);
    assert!(m.status.success(), "{}", String::from_utf8_lossy(&m.stderr));
    for want in ["NAME", "SYNOPSIS", "lexrun", "verify", "mcp", "completions"] {
        assert!(text.contains(want), "`{want}` missing from:\n{text}");
    }
}

#[test]
fn help_of_help_is_help() {
    for args in [["help", "--help"], ["help", "-h"], ["help", "help"]] {
        let o = lexrun(&args);
        assert_eq!(o.status.code(), Some(0), "lexrun {args:?}");
        assert!(stdout(&o).contains("Usage: lexrun help"), "{}", stdout(&o));
    }
}

#[test]
fn init_writes_a_library_that_passes_check_and_test_and_overwrites_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("firm");
    let o = lexrun(&["init", lib.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", support::stderr(&o));
    for f in [
        "lexrun.toml",
        ".gitignore",
        "starter.lex",
        "starter.test.lex",
        "cassettes/starter.jsonl",
        "matters/sample/record/02-lease.txt",
    ] {
        assert!(lib.join(f).is_file(), "{f} not written");
    }
    let wf = lib.join("starter.lex");
    let o = lexrun(&[
        "check",
        wf.to_str().unwrap(),
        lib.join("starter.test.lex").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", support::stderr(&o));
    assert!(support::stderr(&o).contains("(0 errors, 0 warnings)"));
    let o = support::Lexrun::new()
        .arg("test")
        .current_dir(&lib)
        .output();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        stdout(&o),
        support::stderr(&o)
    );
    let said = stdout(&o) + &support::stderr(&o);
    assert!(said.contains("1 passed, 0 failed"), "{said}");
    let o = lexrun(&["fmt", "--check", lib.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "the starter is formatted");
    // A second init changes nothing.
    std::fs::write(&wf, "edited").unwrap();
    let o = lexrun(&["init", lib.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(support::stderr(&o).contains("nothing was written"));
    assert_eq!(std::fs::read_to_string(&wf).unwrap(), "edited");
}
