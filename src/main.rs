// lexrun allocates many small values while parsing; mimalloc handles that churn faster than
// the system allocator (about a fifth off `lexrun plan` on a 1,000-stage workflow). How long it
// keeps freed memory is set in one place, for `verify` (`cli/verify.rs`).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    lexrun::cli::main()
}

#[cfg(test)]
mod tests {
    /// mimalloc's `mi_option_purge_delay`, as `cli/verify.rs` numbers it.
    const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

    #[test]
    fn the_purge_delay_option_is_the_one_that_defaults_to_a_second() {
        // The binary has not changed it: only `verify` does, and only once it runs.
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            // SAFETY: reads one integer option of the allocator.
            assert_eq!(unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) }, 1000);
        }
    }
}
