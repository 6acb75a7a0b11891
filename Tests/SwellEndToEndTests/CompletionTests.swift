import Foundation
import Testing
import SwellPipelineTestSupport

/// Bash completion as a user meets it: the script `swell --generate-completion-script bash`
/// prints, sourced into bash and asked for the words at a cursor. The pipeline argument
/// offers YAML files (and folders), `--log-level` its levels, `--only` the names of the
/// sources and exports of the pipeline file on the line.
@Suite struct CompletionTests {
    /// What bash offers for `line` (the cursor at its end), one word per element.
    static func offered(_ line: String, in workspace: Workspace) throws -> [String] {
        let driver = """
            source ./swell.bash
            COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}
            read -ra COMP_WORDS <<< "$COMP_LINE"
            [[ $COMP_LINE == *" " ]] && COMP_WORDS+=("")
            COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
            COMPREPLY=()
            _swell swell "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        try workspace.write("drive.sh", driver)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["drive.sh", line]
        process.currentDirectoryURL = workspace.url
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init).sorted()
    }

    @Test func bashOffersFilesLevelsAndTheFilesNames() throws {
        let workspace = try Workspace()
        let script = try workspace.run("--generate-completion-script", "bash")
        #expect(script.status == 0)
        try workspace.write("swell.bash", script.stdout)
        try workspace.write("shop.yml", """
            version: 1
            name: shop
            store: shop.sqlite
            entities:
              Item: { key: [id], attributes: { id: integer } }
            sources:
              - { name: items, entity: Item, url: items.json }
              - { name: more-items, entity: Item, url: more.json }
            exports:
              - { name: all-items, entity: Item, path: out/items.csv, columns: [id] }
            """)
        try workspace.write("notes.txt", "not a pipeline")
        let swell = SwellProcess.executable.path
        let files = try Self.offered("\(swell) run sh", in: workspace)
        #expect(files == ["shop.yml"], "\(files)")
        #expect(try Self.offered("\(swell) run shop.yml --log-level ", in: workspace)
                == ["debug", "error", "info", "notice", "trace", "warning"])
        #expect(try Self.offered("\(swell) run shop.yml --only ", in: workspace) == ["all-items", "items", "more-items"])
        #expect(try Self.offered("\(swell) export shop.yml --only it", in: workspace) == ["items"])
    }
}
