fn main() -> std::process::ExitCode {
    lexrun::cli::main()
}
