//! `completions` and `man`: what a shell and `man` need, generated from the command line
//! itself so they never fall behind it.

use clap::CommandFactory;

use super::args::Cli;
use super::output::{exit, print_out};

/// The completion script for `shell` on stdout, e.g. `source <(lexrun completions bash)`.
pub(super) fn cmd_completions(shell: clap_complete::Shell) -> u8 {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "lexrun", &mut out);
    print_out(&String::from_utf8_lossy(&out))
}

/// The man page (roff) on stdout: `lexrun man | man -l -`, or saved as `lexrun.1`.
pub(super) fn cmd_man() -> u8 {
    let mut out = Vec::new();
    if let Err(e) = clap_mangen::Man::new(Cli::command()).render(&mut out) {
        eprintln!("error: cannot write the man page: {e}");
        return exit::USAGE;
    }
    print_out(&String::from_utf8_lossy(&out))
}
