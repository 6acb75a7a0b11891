import ArgumentParser

/// The `swell` command: sync remote JSON into a local store and export it as gzipped CSV.
@main
struct Swell: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "swell",
        abstract: "Sync remote JSON into a local store and export it as gzipped CSV.",
        discussion: "The pipeline commands (run, import, export, validate, status, seed) arrive with the pipeline issue."
    )
}
